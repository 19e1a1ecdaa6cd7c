import test from 'ava';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { monitorSchema } from '../healthSchema.js';
import { selfSignedCertificate, startDnsPeer, startHttpPeer, startTcpPeer } from '../../../../test/health/loopbackPeers.js';
import { sleep, waitFor } from '../../../../test/support/waitFor.js';
import type { CheckOutcome, CheckTarget } from './check.js';
import { checkFor as checkRunFor } from './registry.js';

/** The monitor's check as a function returning a promise of its outcome. */
const checkFor = (...args: Parameters<typeof checkRunFor>): ((target: CheckTarget) => Promise<CheckOutcome>) => {
  const run = checkRunFor(...args);
  return (target) => new Promise((resolve) => run(target)(resolve));
};

const monitor = (m: Record<string, unknown>) => monitorSchema.parse({ name: 'm', intervalMs: 5000, timeoutMs: 3000, ...m });
const target = (port: number, host?: string) => ({ address: '127.0.0.1', port, host });

test('tcp: up while listening, ECONNREFUSED when stopped, up again after restart', async (t) => {
  const peer = await startTcpPeer();
  const check = checkFor(monitor({ type: 'tcp' }));
  const up = await check(target(peer.port));
  t.true(up.ok);
  t.is(up.error, '');
  t.true(up.latencyMs >= 0 && up.latencyMs < 500);
  await peer.stop();
  t.like(await check(target(peer.port)), { ok: false, error: 'ECONNREFUSED' });
  await peer.restart();
  t.true((await check(target(peer.port))).ok);
  await peer.stop();
});

test('tcp: a listener whose accept queue is full (SYN dropped) fails with timeout', async (t) => {
  // A child process listens with a backlog of 1 and then blocks its event loop, so the kernel
  // completes no further handshakes once the queue is full: the situation of an overloaded server.
  const child = spawn(process.execPath, [
    '-e',
    `const s = require('net').createServer(); s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
       console.log(s.address().port);
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 15000);
     });`,
  ]);
  t.teardown(() => child.kill('SIGKILL'));
  const port = Number(await new Promise<string>((r) => child.stdout.once('data', (d: Buffer) => r(d.toString()))));
  const fillers: Socket[] = [];
  for (let i = 0; i < 4; i++) fillers.push(connect({ host: '127.0.0.1', port }).on('error', () => {}));
  await sleep(100);
  const r = await checkFor(monitor({ type: 'tcp', timeoutMs: 300 }))(target(port));
  t.like(r, { ok: false, error: 'timeout' });
  t.true(r.latencyMs >= 290 && r.latencyMs < 2000, `latency ${r.latencyMs} ms`);
  for (const f of fillers) f.destroy();
});

test('http: method, path and Host header as configured; expected status and body', async (t) => {
  const peer = await startHttpPeer();
  peer.behaviour.body = 'status: healthy v2';
  const check = checkFor(monitor({ type: 'http', method: 'HEAD', path: '/healthz?x=1', host: 'www.example.test' }));
  t.like(await check(target(peer.port)), { ok: true, error: '' });
  t.like(peer.seen.at(-1), { method: 'HEAD', path: '/healthz?x=1', host: `www.example.test:${peer.port}` });

  const perEndpointHost = checkFor(monitor({ type: 'http', host: 'monitor.example.test' }));
  t.true((await perEndpointHost(target(peer.port, 'endpoint.example.test'))).ok);
  t.is(peer.seen.at(-1)!.host, `endpoint.example.test:${peer.port}`, "the endpoint's check.host wins over the monitor's host");

  const plain = checkFor(monitor({ type: 'http' }));
  t.true((await plain(target(peer.port))).ok);
  t.is(peer.seen.at(-1)!.host, `127.0.0.1:${peer.port}`);

  peer.behaviour.status = 503;
  t.like(await plain(target(peer.port)), { ok: false, error: 'status 503' });
  const classes = checkFor(monitor({ type: 'http', expectStatus: ['5xx', 204] }));
  t.true((await classes(target(peer.port))).ok);
  peer.behaviour.status = 204;
  t.true((await classes(target(peer.port))).ok);
  peer.behaviour.status = 200;
  t.false((await classes(target(peer.port))).ok);

  const contains = checkFor(monitor({ type: 'http', bodyContains: 'healthy' }));
  t.true((await contains(target(peer.port))).ok);
  const regex = checkFor(monitor({ type: 'http', bodyMatches: 'v[0-9]+$' }));
  t.true((await regex(target(peer.port))).ok);
  peer.behaviour.body = 'status: degraded';
  t.like(await contains(target(peer.port)), { ok: false, error: 'body does not contain the expected text' });
  t.like(await regex(target(peer.port)), { ok: false, error: 'body does not match the expected pattern' });

  await peer.stop();
  t.like(await plain(target(peer.port)), { ok: false, error: 'ECONNREFUSED' });
});

test('http: a slow answer fails with timeout within the configured timeout', async (t) => {
  const peer = await startHttpPeer();
  peer.behaviour.delayMs = 2000;
  const check = checkFor(monitor({ type: 'http', timeoutMs: 150 }));
  const r = await check(target(peer.port));
  t.like(r, { ok: false, error: 'timeout' });
  t.true(r.latencyMs >= 140 && r.latencyMs < 1500, `latency ${r.latencyMs} ms`);
  await peer.stop();
});

test('http: one new connection per check', async (t) => {
  const connections: Socket[] = [];
  const counter = createServer((c) => {
    connections.push(c);
    c.on('error', () => {});
    c.once('data', () => c.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nOK'));
  });
  await new Promise<void>((r) => counter.listen(0, '127.0.0.1', () => r()));
  const port = (counter.address() as { port: number }).port;
  const check = checkFor(monitor({ type: 'http' }));
  for (let i = 0; i < 3; i++) t.true((await check(target(port))).ok);
  t.is(connections.length, 3);
  for (const c of connections) c.destroy();
  await new Promise<void>((r) => counter.close(() => r()));
});

test('https: SNI and certificate verification (on: trusted CA and matching name; off: anything)', async (t) => {
  const pems = await selfSignedCertificate(['svc.example.test']);
  const peer = await startHttpPeer({ tls: pems });
  const ca = Buffer.from(pems.cert);

  const verifying = checkFor(monitor({ type: 'https', sni: 'svc.example.test' }), { caFile: ca });
  t.like(await verifying(target(peer.port)), { ok: true });
  t.is(peer.seen.at(-1)!.servername, 'svc.example.test');

  const wrongName = checkFor(monitor({ type: 'https', sni: 'other.example.test' }), { caFile: ca });
  t.like(await wrongName(target(peer.port)), { ok: false, error: 'ERR_TLS_CERT_ALTNAME_INVALID' });

  const untrusted = checkFor(monitor({ type: 'https', sni: 'svc.example.test' }));
  t.like(await untrusted(target(peer.port)), { ok: false, error: 'DEPTH_ZERO_SELF_SIGNED_CERT' });

  const noVerify = checkFor(monitor({ type: 'https', tlsVerify: false }));
  t.like(await noVerify(target(peer.port)), { ok: true });

  const sniFromHost = checkFor(monitor({ type: 'https' }), { caFile: ca });
  t.like(await sniFromHost(target(peer.port, 'svc.example.test')), { ok: true });
  t.is(peer.seen.at(-1)!.servername, 'svc.example.test');
  t.is(peer.seen.at(-1)!.host, `svc.example.test:${peer.port}`);
  await peer.stop();
});

test('dns: expected rcode and answer; wrong answer, wrong rcode and silence fail', async (t) => {
  const peer = await startDnsPeer();
  const check = checkFor(monitor({ type: 'dns', queryName: 'probe.example.test', expectAnswer: '192.0.2.1' }));
  t.like(await check(target(peer.port)), { ok: true, error: '' });
  peer.behaviour.address = '192.0.2.99';
  t.like(await check(target(peer.port)), { ok: false, error: 'expected answer missing' });
  const rcodeOnly = checkFor(monitor({ type: 'dns', queryName: 'probe.example.test' }));
  t.true((await rcodeOnly(target(peer.port))).ok);
  peer.behaviour.rcode = 'SERVFAIL';
  t.like(await rcodeOnly(target(peer.port)), { ok: false, error: 'rcode SERVFAIL' });
  const nx = checkFor(monitor({ type: 'dns', queryName: 'gone.example.test', expectRcode: 'NXDOMAIN' }));
  peer.behaviour.rcode = 'NXDOMAIN';
  t.true((await nx(target(peer.port))).ok);
  await peer.stop();
  const silent = checkFor(monitor({ type: 'dns', queryName: 'probe.example.test', timeoutMs: 200 }));
  const r = await silent(target(peer.port));
  t.false(r.ok);
  t.true(r.error === 'timeout' || r.error === 'ECONNREFUSED', r.error);
});

/** Sockets in TIME_WAIT with `port` on either end, from the kernel's table (/proc/net/tcp, state 06). */
function timeWaitSockets(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => {
      const f = line.trim().split(/\s+/);
      return f[3] === '06' && (f[1]?.endsWith(`:${hex}`) || f[2]?.endsWith(`:${hex}`));
    }).length;
}

/**
 * A keep-alive HTTP server that never closes first, so a FIN close by the check would leave the
 * check's side in TIME_WAIT; it records how each connection ended ('end' for a FIN, the error
 * code for an RST). `trickle`: send the head, then the body slowly, never finishing.
 */
async function keepAliveServer(trickle = false): Promise<{ port: number; endings: string[]; close(): Promise<void> }> {
  const endings: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((c) => {
    sockets.add(c);
    c.on('end', () => endings.push('end'));
    c.on('error', (e: NodeJS.ErrnoException) => endings.push(e.code ?? e.message));
    c.once('data', () => {
      if (!trickle) return void c.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\n\r\nOK');
      c.write('HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\npart');
      const more = setInterval(() => (c.destroyed ? clearInterval(more) : c.write('x'.repeat(1000))), 10);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as { port: number }).port,
    endings,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

test('http and tcp: a decided check ends its connection with an RST, leaving no TIME_WAIT socket', async (t) => {
  const server = await keepAliveServer();
  t.teardown(() => server.close());
  const http = checkFor(monitor({ type: 'http' }));
  const tcp = checkFor(monitor({ type: 'tcp' }));
  for (let i = 0; i < 3; i++) t.like(await http(target(server.port)), { ok: true });
  t.like(await tcp(target(server.port)), { ok: true });
  await waitFor('the server to see four connections end', () => server.endings.length === 4, 5000, { detail: () => server.endings.join(' ') });
  t.deepEqual(server.endings, ['ECONNRESET', 'ECONNRESET', 'ECONNRESET', 'ECONNRESET'], 'the server saw resets, not FINs');
  t.is(timeWaitSockets(server.port), 0);
});

test('http: a server still sending its body when the verdict is known is reset without a false failure', async (t) => {
  const server = await keepAliveServer(true);
  t.teardown(() => server.close());
  const head = checkFor(monitor({ type: 'http' }));
  const body = checkFor(monitor({ type: 'http', bodyContains: 'part' }));
  t.like(await head(target(server.port)), { ok: true, error: '' });
  t.like(await body(target(server.port)), { ok: true, error: '' });
  t.like(await head(target(server.port)), { ok: true, error: '' }, 'the reused socket connects again after a reset');
  await waitFor('the server to see three connections end', () => server.endings.length === 3, 5000, { detail: () => server.endings.join(' ') });
  t.deepEqual(server.endings, ['ECONNRESET', 'ECONNRESET', 'ECONNRESET']);
  t.is(timeWaitSockets(server.port), 0);
});
