import test from 'ava';
import { Registry } from 'prom-client';
import { AdminServer } from '../../admin/adminServer.js';
import { metricsSchema } from './metricsSchema.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { metricId } from './catalog.js';
import { MetricStore } from './metricStore.js';
import { registerMetricRoutes } from './pushRoutes.js';

const TOKEN = 'test-token-0123456789abcdef';
const NOW = 1_700_000_000_000;

async function start(token: string | null = TOKEN) {
  const config = metricsSchema.parse({ client: { maxNetworks: 1 } });
  const store = new MetricStore(config, ['a', 'b'], ['web']);
  const registry = new Registry();
  const admin = new AdminServer(token ?? undefined, createLogger('silent'));
  registerMetricRoutes(admin, { store, config: () => config, registry, now: () => NOW });
  await admin.start('127.0.0.1', 0);
  const base = `http://127.0.0.1:${admin.port}`;
  const post = (path: string, body: string, auth: string | null = token) =>
    fetch(`${base}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) } });
  return { store, registry, admin, base, post };
}

test('POST /metrics/host with the token applies the batch; the store and Prometheus see it', async (t) => {
  const { store, registry, admin, post } = await start();
  t.teardown(() => admin.stop());
  const r = await post(
    '/metrics/host',
    JSON.stringify({
      samples: [
        { dc: 'a', cpu: 12.5, status: 'up' },
        { dc: 'b', cpu: 80 },
      ],
    }),
  );
  t.is(r.status, 200);
  t.deepEqual(await r.json(), { accepted: 2 });
  t.is(store.read('host', '', 'a', metricId('host', 'cpu'), NOW), 12.5);
  const text = await registry.metrics();
  t.regex(text, /gslbd_metric_pushes_total\{source="host",result="accepted"\} 1/);
  t.regex(text, /gslbd_metric_samples_total\{source="host"\} 2/);
});

test('a malformed batch gets 400 with each problem by path, and nothing is applied', async (t) => {
  const { store, admin, post, registry } = await start();
  t.teardown(() => admin.stop());
  const r = await post(
    '/metrics/host',
    JSON.stringify({
      samples: [
        { dc: 'a', cpu: 5 },
        { dc: 'b', cpu: -1 },
      ],
    }),
  );
  t.is(r.status, 400);
  t.deepEqual(await r.json(), {
    error: 'host metrics rejected; nothing was applied',
    problems: [{ path: 'samples[1].cpu', message: 'must be a number from 0 to 100 (percent)' }],
  });
  t.true(Number.isNaN(store.read('host', '', 'a', metricId('host', 'cpu'), NOW)));
  t.regex(await registry.metrics(), /gslbd_metric_pushes_total\{source="host",result="invalid"\} 1/);
});

test('NaN in the body is not JSON: 400 from the admin listener', async (t) => {
  const { admin, post } = await start();
  t.teardown(() => admin.stop());
  const r = await post('/metrics/host', '{"samples":[{"dc":"a","cpu":NaN}]}');
  t.is(r.status, 400);
  t.regex(((await r.json()) as { error: string }).error, /^body is not valid JSON/);
});

test('an unknown data center or service gets 422', async (t) => {
  const { admin, post } = await start();
  t.teardown(() => admin.stop());
  const r = await post('/metrics/service', JSON.stringify({ samples: [{ service: 'web', dc: 'mars', healthyBackends: 3 }] }));
  t.is(r.status, 422);
  t.deepEqual(((await r.json()) as { problems: unknown }).problems, [{ path: 'samples[0].dc', message: 'unknown data center "mars"' }]);
});

test('without the token 401; with no token configured 403; GET on a push route 405', async (t) => {
  const { admin, post, base } = await start();
  t.teardown(() => admin.stop());
  t.is((await post('/metrics/client', '{}', null)).status, 401);
  t.is((await post('/metrics/client', '{}', 'wrong-token-0123456789abcdef')).status, 401);
  t.is((await fetch(`${base}/metrics/client`)).status, 405);
  const open = await start(null);
  t.teardown(() => open.admin.stop());
  t.is((await open.post('/metrics/host', JSON.stringify({ samples: [{ dc: 'a', cpu: 1 }] }), 'anything')).status, 403);
});

test('GET /metrics/sources tells agents the metrics, units, cadence and client network lengths', async (t) => {
  const { admin, base, post } = await start();
  t.teardown(() => admin.stop());
  await post(
    '/metrics/client',
    JSON.stringify({
      samples: [
        { network: '10.0.0.0/24', dc: 'a', hops: 3 },
        { network: '10.0.1.0/24', dc: 'a', hops: 3 },
      ],
    }),
  );
  const body = (await (await fetch(`${base}/metrics/sources`)).json()) as Record<string, unknown>;
  t.deepEqual(body.host, {
    intervalSeconds: 30,
    staleAfterSeconds: 90,
    metrics: [
      { name: 'cpu', unit: 'percent' },
      { name: 'mem', unit: 'percent' },
      { name: 'bw', unit: 'bits/s' },
      { name: 'status', unit: 'up|down' },
      { name: 'packetLoss', unit: 'percent' },
    ],
  });
  t.like(body.client as object, { intervalSeconds: 60, staleAfterSeconds: 180, ipv4Prefix: 24, ipv6Prefix: 48, maxNetworks: 1 });
  t.deepEqual(body.store, { hostDcs: 0, serviceRows: 0, clientNetworks: 1, clientEvictions: 1 });
});
