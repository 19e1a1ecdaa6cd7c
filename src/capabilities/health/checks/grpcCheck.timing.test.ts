import test from 'ava';
import { connect, createServer, type Socket } from 'node:net';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { createLogger } from '../../../core/telemetry/logger.js';
import { parseConfigText } from '../../../process/loadConfig.js';
import { selfSignedCertificate } from '../../../../test/health/loopbackPeers.js';
import { EXAMPLE_ZONE } from '../../../../test/support/exampleZone.js';
import { sleep, waitFor } from '../../../../test/support/waitFor.js';
import { applyResult, unknownCheckState } from '../checkState.js';
import { HealthMonitor } from '../healthMonitor.js';
import { monitorSchema } from '../healthSchema.js';
import type { CheckOutcome, CheckTarget } from './check.js';
import { checkFor as checkRunFor } from './registry.js';

/** A real gRPC server (`@grpc/grpc-js`) on loopback, with the health service of `grpc-health-check` when `statuses` is given. */
interface GrpcPeer {
  readonly port: number;
  /** The health service; undefined for a server that does not implement it. */
  readonly health: HealthImplementation | undefined;
  stop(): void;
}

async function startGrpcPeer(
  options: { statuses?: Record<string, ServingStatus>; tls?: { key: string; cert: string }; address?: string } = {},
): Promise<GrpcPeer> {
  const server = new Server();
  const health = options.statuses ? new HealthImplementation(options.statuses) : undefined;
  health?.addToServer(server);
  const creds = options.tls
    ? ServerCredentials.createSsl(null, [{ private_key: Buffer.from(options.tls.key), cert_chain: Buffer.from(options.tls.cert) }], false)
    : ServerCredentials.createInsecure();
  const address = options.address ?? '127.0.0.1';
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${address.includes(':') ? `[${address}]` : address}:0`, creds, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  return { port, health, stop: () => server.forceShutdown() };
}

/** The monitor's check as a function returning a promise of its outcome. */
const checkFor = (...args: Parameters<typeof checkRunFor>): ((target: CheckTarget) => Promise<CheckOutcome>) => {
  const run = checkRunFor(...args);
  return (target) => new Promise((resolve) => run(target)(resolve));
};

const monitor = (m: Record<string, unknown>) => monitorSchema.parse({ name: 'g', type: 'grpc', intervalMs: 5000, timeoutMs: 3000, ...m });
const target = (port: number, host?: string, address = '127.0.0.1'): CheckTarget => ({ address, port, host });

test('grpc: SERVING is up; NOT_SERVING, SERVICE_UNKNOWN, UNKNOWN and a service the server does not know are down, each named', async (t) => {
  const peer = await startGrpcPeer({ statuses: { '': 'SERVING', app: 'SERVING' } });
  t.teardown(() => peer.stop());
  const server = checkFor(monitor({}));
  const app = checkFor(monitor({ service: 'app' }));
  t.like(await server(target(peer.port)), { ok: true, error: '' });
  t.like(await app(target(peer.port)), { ok: true, error: '' });

  peer.health!.setStatus('app', 'NOT_SERVING');
  t.like(await app(target(peer.port)), { ok: false, error: 'status NOT_SERVING' });
  t.true((await server(target(peer.port))).ok, "the server's overall status is its own");
  // SERVICE_UNKNOWN is the Watch answer for an unknown service; a server may still send it to Check.
  peer.health!.setStatus('app', 'SERVICE_UNKNOWN' as ServingStatus);
  t.like(await app(target(peer.port)), { ok: false, error: 'status SERVICE_UNKNOWN' });
  peer.health!.setStatus('app', 'UNKNOWN');
  t.like(await app(target(peer.port)), { ok: false, error: 'status UNKNOWN' });
  t.like(await checkFor(monitor({ service: 'other' }))(target(peer.port)), { ok: false, error: 'NOT_FOUND' });

  peer.health!.setStatus('app', 'SERVING');
  t.like(await app(target(peer.port)), { ok: true });
});

test('grpc: a server without the health service, a stopped server and a silent listener are down (UNIMPLEMENTED, UNAVAILABLE, timeout)', async (t) => {
  const bare = await startGrpcPeer();
  t.teardown(() => bare.stop());
  t.like(await checkFor(monitor({}))(target(bare.port)), { ok: false, error: 'UNIMPLEMENTED' });

  const stopped = await startGrpcPeer({ statuses: { '': 'SERVING' } });
  stopped.stop();
  t.like(await checkFor(monitor({}))(target(stopped.port)), { ok: false, error: 'UNAVAILABLE' });

  // Accepts the connection and never speaks HTTP/2: only the deadline ends the check.
  const sockets: Socket[] = [];
  const silent = createServer((s) => sockets.push(s.on('error', () => {})));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const r = await checkFor(monitor({ timeoutMs: 300 }))(target((silent.address() as { port: number }).port));
  t.like(r, { ok: false, error: 'timeout' });
  t.true(r.latencyMs >= 290 && r.latencyMs < 2000, `latency ${r.latencyMs} ms`);
});

test('grpc: one new connection per check, closed once the check is decided', async (t) => {
  const peer = await startGrpcPeer({ statuses: { '': 'SERVING' } });
  t.teardown(() => peer.stop());
  // A TCP relay in front of the server counts the connections the checks open and sees them close.
  let opened = 0;
  let closed = 0;
  const relay = createServer((client) => {
    opened++;
    const server = connect(peer.port, '127.0.0.1');
    client.pipe(server).pipe(client);
    const end = (): void => {
      client.destroy();
      server.destroy();
    };
    client.on('error', end).on('close', () => {
      closed++;
      end();
    });
    server.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => relay.close());
  const check = checkFor(monitor({}));
  const port = (relay.address() as { port: number }).port;
  for (let i = 0; i < 3; i++) t.true((await check(target(port))).ok);
  t.is(opened, 3);
  await waitFor('every check connection closed', () => closed === 3, 5000);
});

test('grpc over TLS: verified against the CA file with the server name (the endpoint host by default); a wrong name, an unknown CA and plaintext fail', async (t) => {
  const pems = await selfSignedCertificate(['svc.example.test']);
  const peer = await startGrpcPeer({ statuses: { '': 'SERVING' }, tls: pems });
  t.teardown(() => peer.stop());
  const ca = { caFile: Buffer.from(pems.cert) };
  t.like(await checkFor(monitor({ tls: true, serverName: 'svc.example.test' }), ca)(target(peer.port)), { ok: true, error: '' });
  t.like(await checkFor(monitor({ tls: true }), ca)(target(peer.port, 'svc.example.test')), { ok: true, error: '' });
  t.like(await checkFor(monitor({ tls: true, serverName: 'other.example.test' }), ca)(target(peer.port)), { ok: false, error: 'UNAVAILABLE' });
  t.like(await checkFor(monitor({ tls: true, serverName: 'svc.example.test' }))(target(peer.port)), { ok: false, error: 'UNAVAILABLE' });
  t.like(await checkFor(monitor({}))(target(peer.port)), { ok: false, error: 'UNAVAILABLE' }, 'plaintext against a TLS server');
});

test('grpc: an IPv6 target', async (t) => {
  const peer = await startGrpcPeer({ statuses: { '': 'SERVING' }, address: '::1' });
  t.teardown(() => peer.stop());
  t.like(await checkFor(monitor({}))(target(peer.port, undefined, '::1')), { ok: true, error: '' });
});

test('grpc monitors: serverName and caFile need tls; no default port', (t) => {
  for (const key of ['serverName', 'caFile']) {
    const r = monitorSchema.safeParse({ name: 'g', type: 'grpc', [key]: key === 'caFile' ? 'ca.pem' : 'svc.example.test' });
    t.false(r.success);
    t.deepEqual(
      r.error!.issues.map((i) => i.path.join('.')),
      [key],
    );
  }
  t.like(monitorSchema.parse({ name: 'g', type: 'grpc' }), { service: '', tls: false });
  t.throws(
    () =>
      parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services: [{ name: web, endpoints: [{ dc: dc1, address: 192.0.2.1, monitors: [g], check: { address: 127.0.0.1 } }] }]
health: { monitors: [{ name: g, type: grpc }] }
`),
    { message: /needs a port/ },
    'a grpc monitor with no port anywhere is refused',
  );
});

test('grpc: transitions follow rise/fall with a real server flipping its serving status', async (t) => {
  const peer = await startGrpcPeer({ statuses: { app: 'SERVING' } });
  t.teardown(() => peer.stop());
  const outcomes: boolean[] = [];
  const m = new HealthMonitor({ log: createLogger('silent'), onCheck: (_id, o) => outcomes.push(o.ok) });
  t.teardown(() => m.stop());
  // onCheck runs just before a result is applied, so at a publish `outcomes` holds exactly the
  // results the published state comes from.
  const key = 'web/dc1/192.0.2.1';
  const changes: { status: string; results: number }[] = [];
  m.onChange((v) => changes.push({ status: v.endpointHealth(key).status, results: outcomes.length }));
  m.configure(
    parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services: [{ name: web, endpoints: [{ dc: dc1, address: 192.0.2.1, monitors: [g], check: { address: 127.0.0.1, port: ${peer.port} } }] }]
health: { monitors: [{ name: g, type: grpc, service: app, intervalMs: 250, timeoutMs: 250, rise: 2, fall: 3, jitter: 0.1 }] }
`),
    '/tmp/x.yaml',
  );
  m.start();
  const statusOf = () => m.view.endpointHealth(key).status;
  await waitFor('up', () => statusOf() === 'up', 10_000);
  peer.health!.setStatus('app', 'NOT_SERVING');
  await waitFor('down once the server says NOT_SERVING', () => statusOf() === 'down', 10_000);
  await sleep(750);
  t.is(statusOf(), 'down', 'stays down while the server is not serving');
  peer.health!.setStatus('app', 'SERVING');
  await waitFor('up again once the server serves', () => statusOf() === 'up', 10_000);
  await m.stop();

  // A check that times out on a loaded machine is a real failure to the monitor, so the published
  // states are compared with the rise/fall rule (first result decides, down after fall = 3 failures
  // in a row, up after rise = 2 successes in a row) applied to the results as they came.
  const replay = unknownCheckState(0);
  const ruleAfter: string[] = ['unknown'];
  outcomes.forEach((ok, i) => {
    applyResult(replay, ok, i + 1, 2, 3);
    ruleAfter.push(replay.status);
  });
  changes.forEach(({ status, results }, i) => {
    t.is(status, ruleAfter[results] ?? 'no such result', `publish ${i} (after ${results} results) is the rule's state`);
  });
  t.deepEqual(
    changes.slice(-3).map((c) => c.status),
    ['up', 'down', 'up'],
  );
  const firstDown = changes.findIndex((c) => c.status === 'down');
  t.deepEqual(
    outcomes.slice(changes[firstDown]!.results - 3, changes[firstDown]!.results),
    [false, false, false],
    'down after exactly fall = 3 failed checks in a row',
  );
});
