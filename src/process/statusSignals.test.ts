import test from 'ava';
import { parseConfigText } from './loadConfig.js';
import { createLogger } from '../core/telemetry/logger.js';
import { metricId } from '../capabilities/steering/catalog.js';
import { MetricStore } from '../capabilities/steering/metricStore.js';
import { startTcpPeer } from '../../test/health/loopbackPeers.js';
import { waitFor } from '../../test/support/waitFor.js';
import { HealthMonitor } from '../capabilities/health/healthMonitor.js';
import { StatusSignals } from './statusSignals.js';

const HOST_STATUS = metricId('host', 'status');
const SERVICE_STATUS = metricId('service', 'status');

test('monitor verdicts reach the metric store as host.status and service.status; unknown and uncovered stay out', async (t) => {
  const point = await startTcpPeer();
  const svc = await startTcpPeer();
  const yaml = (withPoints: boolean) => `
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters:
  - { name: a${withPoints ? `, checkPoints: { wan: [{ monitor: tcp, address: 127.0.0.1, port: ${point.port} }] }` : ''} }
  - { name: b }
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1, monitors: [tcp], check: { address: 127.0.0.1, port: ${svc.port} } }
      - { dc: b, address: 192.0.2.2 }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: 100, timeoutMs: 100, rise: 1, fall: 1 }]
`;
  const config = parseConfigText(yaml(true));
  const store = new MetricStore(config.metrics, ['a', 'b'], ['web']);
  const monitor = new HealthMonitor({ log: createLogger('silent') });
  t.teardown(() => monitor.stop());
  const signals = new StatusSignals(monitor, store);
  monitor.configure(config, '/tmp/x.yaml');
  signals.sync(1000);
  t.true(Number.isNaN(store.read('host', '', 'a', HOST_STATUS, 1000)), 'unknown is no verdict');
  monitor.onChange(() => signals.sync(2000));
  monitor.start();
  await waitFor(
    'verdicts',
    () => store.read('host', '', 'a', HOST_STATUS, 2000) === 1 && store.read('service', 'web', 'a', SERVICE_STATUS, 2000) === 1,
    10_000,
  );
  t.true(Number.isNaN(store.read('service', 'web', 'b', SERVICE_STATUS, 2000)), 'an unmonitored service gives no verdict');
  t.true(Number.isNaN(store.read('host', '', 'b', HOST_STATUS, 2000)), 'a DC without check points gives no verdict');

  await point.stop();
  await waitFor('host down', () => store.read('host', '', 'a', HOST_STATUS, 2000) === 0, 10_000);
  monitor.setOverride('web/b/192.0.2.2', 'drain');
  t.is(store.read('service', 'web', 'b', SERVICE_STATUS, 2000), 0, 'an override covers its service');

  // Reload without check points: the host verdict is cleared.
  monitor.configure(parseConfigText(yaml(false)), '/tmp/x.yaml');
  signals.sync(3000);
  t.true(Number.isNaN(store.read('host', '', 'a', HOST_STATUS, 3000)));
  await svc.stop();
});
