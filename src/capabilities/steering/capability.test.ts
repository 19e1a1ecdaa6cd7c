import test from 'ava';
import { InProcessStateStore } from '../../core/contracts/stateStore.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { metricId } from './catalog.js';
import { PUSHES_MAP, steeringCapability, type PushedBatch } from './capability.js';

/**
 * Pushed metrics travel through the state store: a validated push is written there and the metric
 * store (the snapshot's metric view) applies what it sees, at once in this process — and a batch
 * written to the store by someone else (another node on a shared store) reaches the view the same way.
 */

const NOW = 1_700_000_000_000;
const config = parseConfigText(`
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: a }, { name: b }]
services: [{ name: web, endpoints: [{ dc: a, address: 192.0.2.1 }] }]
`);

function start() {
  const store = new InProcessStateStore();
  const runtime = steeringCapability.start({
    file: '<test>',
    log: createLogger('silent'),
    metrics: new EngineMetrics(),
    store,
    now: () => NOW,
    generation: () => 1,
    publish: () => undefined,
    reload: () => Promise.resolve({ ok: true, generation: 1 }),
  });
  runtime.prepare(config, false);
  return { store, runtime };
}

test('a push through the route is in the state store and in the view before the reply', async (t) => {
  const { store, runtime } = start();
  const route = runtime.routes.find((r) => r.method === 'POST' && r.path === '/metrics/host')!;
  const reply = await route.handle({ url: new URL('http://admin.invalid/metrics/host'), body: { samples: [{ dc: 'a', cpu: 42 }] } });
  t.is(reply.status, 200);
  t.deepEqual(
    store
      .map<PushedBatch>(PUSHES_MAP)
      .get('host|local')
      ?.writes.map((w) => [w.dc, w.values[metricId('host', 'cpu')]]),
    [['a', 42]],
  );
  t.is(runtime.store.read('host', '', 'a', metricId('host', 'cpu'), NOW), 42);
});

test('a batch written to the state store by another writer reaches the view', (t) => {
  const { store, runtime } = start();
  const values: (number | undefined)[] = [];
  values[metricId('host', 'cpu')] = 7;
  store.map<PushedBatch>(PUSHES_MAP).set('host', { writes: [{ subject: '', dc: 'b', values }], atMs: NOW });
  t.is(runtime.store.read('host', '', 'b', metricId('host', 'cpu'), NOW), 7);
});
