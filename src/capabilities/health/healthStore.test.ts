import test from 'ava';
import { parseConfigText } from '../../process/loadConfig.js';
import { InProcessStateStore } from '../../core/contracts/stateStore.js';
import { createLogger } from '../../core/telemetry/logger.js';
import type { AdminOverride, HealthView } from '../../core/views/healthView.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { startTcpPeer } from '../../../test/health/loopbackPeers.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { HealthMonitor } from './healthMonitor.js';
import { CHECK_OBSERVATIONS_MAP, OVERRIDES_MAP, type CheckObservation } from './healthStore.js';

const log = createLogger('silent');
const KEY = 'web/dc1/192.0.2.1';

/** One endpoint checked by tcp on `port`, every `intervalMs`. */
const config = (port: number, intervalMs = 100) =>
  parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints: [{ dc: dc1, address: 192.0.2.1, monitors: [tcp], check: { address: 127.0.0.1, port: ${port} } }]
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: ${intervalMs}, timeoutMs: 100, rise: 1, fall: 1, jitter: 0 }]
`);

test('overrides go through the store: a request writes it, and a write to the store publishes at once', (t) => {
  const store = new InProcessStateStore();
  const overrides = store.map<AdminOverride>(OVERRIDES_MAP);
  const m = new HealthMonitor({ log, store });
  t.teardown(() => m.stop());
  m.configure(config(9), '/tmp/x.yaml');
  const seen: HealthView[] = [];
  m.onChange((v) => seen.push(v));

  m.setOverride(KEY, 'force-down');
  t.is(overrides.get(KEY), 'force-down');

  // A write that did not come through the monitor (another node, once the store is shared).
  overrides.set(KEY, 'drain');
  t.is(seen.length, 2, 'published before set() returned');
  t.is(m.view.endpointHealth(KEY).override, 'drain');
  overrides.delete(KEY);
  t.is(m.view.endpointHealth(KEY).override, undefined);
  // JSON values: what a shared store carries.
  m.setOverride(KEY, 'force-up');
  t.deepEqual(JSON.parse(JSON.stringify([...overrides.entries()])), [[KEY, 'force-up']]);
});

test('check verdicts go through the store: results are written there, and the views are built from what is watched', async (t) => {
  const peer = await startTcpPeer();
  t.teardown(() => peer.stop());
  const store = new InProcessStateStore();
  const observations = store.map<CheckObservation>(CHECK_OBSERVATIONS_MAP);
  const id = `tcp@127.0.0.1:${peer.port}`;

  const m = new HealthMonitor({ log, store });
  t.teardown(() => m.stop());
  m.configure(config(peer.port), '/tmp/x.yaml');
  t.like(observations.get(id), { status: 'unknown' });
  m.start();
  await waitFor('up', () => m.view.endpointHealth(KEY).status === 'up', 10_000);
  t.like(observations.get(id), { status: 'up' });
  t.is(observations.get(id)!.sinceMs, m.view.endpointHealth(KEY).sinceMs);

  // A check that will not run during the test (first run near the end of an hour-long interval):
  // a verdict written to the store reaches the view.
  const quietStore = new InProcessStateStore();
  const quiet = new HealthMonitor({ log, store: quietStore, random: () => 0.999 });
  t.teardown(() => quiet.stop());
  quiet.configure(config(peer.port, 3_600_000), '/tmp/x.yaml');
  quiet.start();
  quietStore.map<CheckObservation>(CHECK_OBSERVATIONS_MAP).set(id, { status: 'down', sinceMs: 1 });
  await waitFor('down from the store', () => quiet.view.endpointHealth(KEY).status === 'down', 5000);
  t.is(quiet.view.hostStatus('dc1'), 'up');
  t.is(quiet.view.serviceStatus('web', 'dc1'), 'down');

  // A reload that removes the check removes its verdict.
  m.configure(config(9), '/tmp/x.yaml');
  t.is(observations.get(id), undefined);
});
