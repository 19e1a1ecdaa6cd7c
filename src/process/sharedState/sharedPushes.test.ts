import test from 'ava';
import { stopAllRedis, startRedis } from '../../../test/support/redisServer.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { metricId } from '../../capabilities/steering/catalog.js';
import { steeringCapability } from '../../capabilities/steering/capability.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { parseConfigText } from '../loadConfig.js';
import { openStateStore, type OpenedStore } from './openStateStore.js';
import { storeSchema } from './storeSchema.js';

/** Pushed metrics over a shared store: an agent pushes to any node, every node's metric view has it. */

const config = parseConfigText(`
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: a }, { name: b }]
services: [{ name: web, endpoints: [{ dc: a, address: 192.0.2.1 }] }]
`);

const opened: OpenedStore[] = [];
test.after.always(async () => {
  await Promise.all(opened.map((o) => o.stop()));
  await stopAllRedis();
});

async function node(url: string, name: string) {
  const o = openStateStore(storeSchema.parse({ redis: { url, node: name, namespace: 'pushes', connectTimeoutSeconds: 5 } }));
  opened.push(o);
  const runtime = steeringCapability.start({
    file: '<test>',
    log: createLogger('silent'),
    metrics: new EngineMetrics(),
    store: o.store,
    now: () => Date.now(),
    generation: () => 1,
    publish: () => undefined,
    reload: () => Promise.resolve({ ok: true, generation: 1 }),
  });
  await o.ready();
  runtime.prepare(config, false);
  return runtime;
}

test('a metric pushed to one node is in every node’s view; pushes of two nodes for the same source both apply', async (t) => {
  const redis = await startRedis();
  const [a, b] = await Promise.all([node(redis.url, 'a'), node(redis.url, 'b')]);
  const push = (n: typeof a, dc: string, cpu: number) =>
    n.routes
      .find((r) => r.method === 'POST' && r.path === '/metrics/host')!
      .handle({ url: new URL('http://admin.invalid/metrics/host'), body: { samples: [{ dc, cpu }] } });
  const cpu = metricId('host', 'cpu');
  t.is((await push(a, 'a', 42)).status, 200);
  t.is((await push(b, 'b', 17)).status, 200);
  for (const n of [a, b])
    await waitFor(
      'both pushes on the node',
      () => n.store.read('host', '', 'a', cpu, Date.now()) === 42 && n.store.read('host', '', 'b', cpu, Date.now()) === 17,
      5000,
    );
  t.pass();
});
