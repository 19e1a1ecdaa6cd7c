import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { prometheusSourceSchema } from './prometheusSchema.js';
import { PrometheusSource } from './prometheusSource.js';

/**
 * The Prometheus source against a real exposition endpoint: prom-client's registry served over
 * HTTP, as any Node exporter serves it (text format 0.0.4 with HELP, TYPE, labels, histograms).
 */

async function exporter(t: { teardown(f: () => Promise<void>): void }): Promise<{ url: string; registry: Registry }> {
  const registry = new Registry();
  const server = createServer((_req, res) => {
    void registry.metrics().then((text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`, registry };
}

test('series map to host and service metrics: label matchers, sum/avg/max, counters as rates, status as up/down; a missing series gives no value (stale, not zero)', async (t) => {
  const { url, registry } = await exporter(t);
  const up = new Gauge({ name: 'backend_servers_up', help: 'servers up', labelNames: ['backend', 'server'], registers: [registry] });
  const load = new Gauge({ name: 'node_cpu_busy_percent', help: 'busy', labelNames: ['cpu'], registers: [registry] });
  const requests = new Counter({ name: 'http_requests_total', help: 'requests', labelNames: ['backend', 'code'], registers: [registry] });
  new Histogram({ name: 'latency_seconds', help: 'latency', registers: [registry] }).observe(0.1);
  up.set({ backend: 'web', server: 'a' }, 1);
  up.set({ backend: 'web', server: 'b' }, 1);
  up.set({ backend: 'web', server: 'c' }, 0);
  up.set({ backend: 'api', server: 'a' }, 1);
  load.set({ cpu: '0' }, 30);
  load.set({ cpu: '1' }, 50);
  requests.inc({ backend: 'web', code: '200' }, 100);
  requests.inc({ backend: 'web', code: '500' }, 10);

  let now = 0;
  const source = new PrometheusSource(
    prometheusSourceSchema.parse({
      url,
      metrics: [
        { series: 'backend_servers_up', match: { backend: 'web' }, service: 'web', metric: 'healthyBackends' },
        { series: 'backend_servers_up', match: { backend: 'web' }, aggregate: 'max', service: 'web', metric: 'status' },
        { series: 'node_cpu_busy_percent', aggregate: 'avg', host: 'cpu' },
        { series: 'node_cpu_busy_percent', aggregate: 'max', host: 'mem' },
        { series: 'http_requests_total', match: { backend: 'web' }, rate: true, service: 'web', metric: 'request' },
        { series: 'latency_seconds', host: 'bw' },
        { series: 'absent_series', host: 'packetLoss' },
      ],
    }),
    () => now,
  );
  t.is(source.name, `prometheus:${url}`);
  t.deepEqual(
    await source.read(),
    { host: { cpu: 40, mem: 50 }, services: [{ service: 'web', healthyBackends: 2, status: 'up' }] },
    'no rate on the first scrape',
  );

  now = 2000;
  requests.inc({ backend: 'web', code: '200' }, 50);
  up.set({ backend: 'web', server: 'a' }, 0);
  up.set({ backend: 'web', server: 'b' }, 0);
  t.deepEqual(await source.read(), { host: { cpu: 40, mem: 50 }, services: [{ service: 'web', healthyBackends: 0, status: 'down', request: 25 }] });

  now = 3000;
  registry.removeSingleMetric('node_cpu_busy_percent');
  requests.reset(); // the exporter restarted: no negative rate
  t.deepEqual(await source.read(), { services: [{ service: 'web', healthyBackends: 0, status: 'down' }] }, 'host series gone: no host values at all, never 0');
});

test('an endpoint that is down or answers an error throws (the agent marks the source failed, its metrics go stale)', async (t) => {
  const source = (url: string): PrometheusSource =>
    new PrometheusSource(prometheusSourceSchema.parse({ url, timeoutSeconds: 2, metrics: [{ series: 'x', host: 'cpu' }] }));
  await t.throwsAsync(source('http://127.0.0.1:1/metrics').read(), undefined, 'nothing listens on port 1');
  const bad = createServer((_req, res) => res.writeHead(503).end('down'));
  await new Promise<void>((r) => bad.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => bad.close(() => r())));
  await t.throwsAsync(source(`http://127.0.0.1:${(bad.address() as AddressInfo).port}/metrics`).read(), { message: /HTTP 503/ });
});

test('a mapping must name one host metric, or a service with a service metric', (t) => {
  const parse = (m: object): boolean => prometheusSourceSchema.safeParse({ url: 'http://127.0.0.1:9100/metrics', metrics: [m] }).success;
  t.true(parse({ series: 'a', host: 'cpu' }));
  t.true(parse({ series: 'a', service: 'web', metric: 'healthyBackends' }));
  t.false(parse({ series: 'a', host: 'healthyBackends' }));
  t.false(parse({ series: 'a', service: 'web' }));
  t.false(parse({ series: 'a', host: 'cpu', service: 'web', metric: 'cpu' }));
  t.false(parse({ series: 'bad-name', host: 'cpu' }));
});
