import test from 'ava';
import { openSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../core/telemetry/logger.js';
import type { ProbeResultReport } from '../core/contracts/agentApi.js';
import { selfSignedCertificate } from '../../test/health/loopbackPeers.js';
import { waitFor } from '../../test/support/waitFor.js';
import { AgentTelemetry } from './agentTelemetry.js';
import { EngineClient } from './engineClient.js';
import { ReadingSlots } from './readingSlots.js';
import { EngineReporter } from './reporter.js';

/**
 * The reporter against a real HTTP server standing in for an engine's agent API: one batch per
 * cycle, retries with growing jittered delays while the engine fails, bounded pending probe
 * results, refusals dropped; and the engine client's TLS verification.
 */

interface Seen {
  readonly atMs: number;
  readonly auth: string | undefined;
  readonly body: { dc?: string; host?: Record<string, unknown>; services?: unknown[]; probes?: unknown[] };
}

async function engine(statuses: (n: number) => number): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (c: string) => (text += c));
    req.on('end', () => {
      seen.push({ atMs: Date.now(), auth: req.headers.authorization, body: JSON.parse(text || '{}') as Seen['body'] });
      const status = statuses(seen.length);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(status === 200 ? { accepted: {} } : { error: 'no' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const silent = createLogger('silent', openSync('/dev/null', 'w'));
const probe = (i: number): ProbeResultReport => ({
  target: `192.0.2.${i % 250}`,
  method: 'dns',
  sent: 4,
  received: 4,
  rttMinMs: 1,
  rttMedianMs: 2,
  jitterMs: 0.1,
});

function reporter(
  url: string,
  slots: ReadingSlots,
  options: Partial<ConstructorParameters<typeof EngineReporter>[3]> = {},
): { r: EngineReporter; telemetry: AgentTelemetry } {
  const telemetry = new AgentTelemetry();
  const r = new EngineReporter(
    new EngineClient(url, 'agent-token-0123456789'),
    { dc: 'east' },
    slots,
    { timeoutMs: 2000, retryMs: 100, maxRetryMs: 400, maxPendingProbes: 5, ...options },
    telemetry,
    silent,
    () => 1, // the largest delay of each retry window, so the test can bound the waits
  );
  return { r, telemetry };
}

test('one batch per cycle with the bearer token; a reading the engine accepted is not sent again', async (t) => {
  const e = await engine(() => 200);
  t.teardown(() => e.close());
  const slots = new ReadingSlots();
  slots.put('host', { host: { cpu: 12 } }, Date.now(), 60_000);
  slots.put('haproxy', { services: [{ service: 'web', healthyBackends: 3 }] }, Date.now(), 60_000);
  const { r } = reporter(e.url, slots);
  t.teardown(() => r.stop());
  r.addProbes([probe(1), probe(2)]);
  await r.send();
  t.is(e.seen.length, 1);
  t.is(e.seen[0]!.auth, 'Bearer agent-token-0123456789');
  t.deepEqual(e.seen[0]!.body, { dc: 'east', host: { cpu: 12 }, services: [{ service: 'web', healthyBackends: 3 }], probes: [probe(1), probe(2)] });
  await r.send();
  t.is(e.seen.length, 1, 'nothing new: no request');
  t.is(r.lastResult, 'accepted');
});

test('an engine that fails is retried with doubling delays up to the cap; pending probe results stay bounded, the oldest dropped and counted', async (t) => {
  const e = await engine((n) => (n <= 4 ? 503 : 200));
  t.teardown(() => e.close());
  const slots = new ReadingSlots();
  slots.put('host', { host: { cpu: 1 } }, Date.now(), 60_000);
  const { r, telemetry } = reporter(e.url, slots);
  t.teardown(() => r.stop());
  r.addProbes([1, 2, 3, 4, 5, 6, 7].map(probe));
  await r.send();
  t.true(r.backingOff);
  await r.send();
  t.is(e.seen.length, 1, 'a cycle during the back-off sends nothing');
  await waitFor('the fifth attempt', () => e.seen.length >= 5 && !r.backingOff, 10_000);
  const gaps = e.seen.slice(1).map((s, i) => s.atMs - e.seen[i]!.atMs);
  // Delays 100, 200, 400, 400 ms (random() = 1 takes the top of each window); timers only fire late.
  for (const [i, floor] of [100, 200, 400, 400].entries()) t.true(gaps[i]! >= floor - 5, `gap ${i}: ${gaps[i]} ms ≥ ${floor}`);
  t.deepEqual(e.seen.at(-1)!.body.probes, [3, 4, 5, 6, 7].map(probe), 'the two oldest of seven were dropped (bound 5)');
  t.regex(await telemetry.registry.metrics(), /gslbd_agent_dropped_probe_results_total\{engine="[^"]+"\} 2/);
  t.regex(await telemetry.registry.metrics(), /gslbd_agent_reports_total\{engine="[^"]+",result="failed"\} 4/);
});

test('a refusal (403) is logged and dropped, not retried', async (t) => {
  const e = await engine(() => 403);
  t.teardown(() => e.close());
  const slots = new ReadingSlots();
  slots.put('host', { host: { cpu: 1 } }, Date.now(), 60_000);
  const { r } = reporter(e.url, slots);
  t.teardown(() => r.stop());
  r.addProbes([probe(1)]);
  await r.send();
  t.false(r.backingOff);
  t.is(r.lastResult, 'refused (403)');
  await r.send();
  t.is(e.seen.length, 1, 'the refused batch is not sent again');
});

test('HTTPS: the engine certificate is verified against the configured CA; another CA is refused', async (t) => {
  const [good, other] = await Promise.all([selfSignedCertificate(['localhost']), selfSignedCertificate(['localhost'])]);
  const server = createHttpsServer({ key: good.key, cert: good.cert }, (_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
  );
  // Bound to what "localhost" resolves to first, which is where the client connects.
  await new Promise<void>((r) => server.listen(0, 'localhost', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const url = `https://localhost:${(server.address() as AddressInfo).port}`;
  const trusted = new EngineClient(url, 'agent-token-0123456789', { ca: Buffer.from(good.cert) });
  const wrong = new EngineClient(url, 'agent-token-0123456789', { ca: Buffer.from(other.cert) });
  const system = new EngineClient(url, 'agent-token-0123456789');
  t.teardown(() => [trusted, wrong, system].forEach((c) => c.close()));
  t.deepEqual(await trusted.request('GET', '/agent/v1/hello', undefined, 5000), { status: 200, json: { ok: true } });
  await t.throwsAsync(wrong.request('GET', '/agent/v1/hello', undefined, 5000), { message: /self[- ]signed|certificate/i });
  await t.throwsAsync(system.request('GET', '/agent/v1/hello', undefined, 5000), { message: /self[- ]signed|certificate/i });
});
