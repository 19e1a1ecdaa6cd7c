import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { fixtureEngine } from '../../../test/support/powerdnsFixture.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { powerDnsFrontDoor, type RemoteBackendServer } from './remoteBackendServer.js';

const LOOKUP_STATIC = JSON.stringify({
  method: 'lookup',
  parameters: { local: '127.0.0.1', qname: 'static.example.test.', qtype: 'A', 'real-remote': '127.0.0.1/32', remote: '127.0.0.1', 'zone-id': -1 },
});
const STATIC_REPLY = { result: [{ qname: 'static.example.test.', qtype: 'A', content: '192.0.2.20', ttl: 60 }] };

interface Started {
  server: RemoteBackendServer;
  metrics: EngineMetrics;
  dir: string;
}

async function start(
  t: { teardown(fn: () => unknown): void },
  config: { maxConnections?: number; maxRequestBytes?: number; requestTimeoutMs?: number; mode?: string } = {},
): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-'));
  const { engine } = fixtureEngine();
  const metrics = new EngineMetrics();
  const server = powerDnsFrontDoor(
    engine,
    metrics,
    engine.log,
    {
      path: 'gslbd.sock',
      mode: config.mode ?? '0660',
      maxConnections: config.maxConnections ?? 64,
      maxRequestBytes: config.maxRequestBytes ?? 65536,
      requestTimeoutMs: config.requestTimeoutMs ?? 10000,
    },
    join(dir, 'gslbd.sock'),
  );
  await server.start();
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { server, metrics, dir };
}

/** A line-oriented client of the socket, like one PowerDNS backend connection. */
class Client {
  private buffer = '';
  private readonly waiting: ((line: string | null) => void)[] = [];
  private readonly lines: (string | null)[] = [];
  readonly socket: Socket;

  constructor(path: string) {
    this.socket = connect(path);
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
        this.deliver(this.buffer.slice(0, nl));
        this.buffer = this.buffer.slice(nl + 1);
      }
    });
    this.socket.on('close', () => this.deliver(null));
    this.socket.on('error', () => undefined);
  }

  private deliver(line: string | null): void {
    const w = this.waiting.shift();
    if (w) w(line);
    else this.lines.push(line);
  }

  /** The next reply line, or null when the server closed the connection (5 s timeout). */
  next(): Promise<string | null> {
    if (this.lines.length > 0) return Promise.resolve(this.lines.shift()!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no reply within 5 s')), 5000);
      this.waiting.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
    });
  }

  async request(line: string): Promise<unknown> {
    this.socket.write(`${line}\n`);
    const reply = await this.next();
    return reply === null ? null : JSON.parse(reply);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Reads `read` until `done` holds (the server sees closed sockets asynchronously); returns the value that did. */
async function eventually<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  let v = await read();
  await waitFor(what, async () => done((v = await read())), 10_000, { detail: () => String(v) });
  return v;
}

async function metricText(m: EngineMetrics, name: string): Promise<string> {
  return m.registry.getSingleMetricAsString(name);
}

test('answers newline-delimited requests, in order, on many connections', async (t) => {
  const { server } = await start(t);
  const clients = [new Client(server.path), new Client(server.path), new Client(server.path)];
  for (const c of clients) t.deepEqual(await c.request(LOOKUP_STATIC), STATIC_REPLY);
  // Two requests in one write are answered in order.
  clients[0]!.socket.write(`${JSON.stringify({ method: 'getAllDomainMetadata', parameters: { name: 'example.test.' } })}\n${LOOKUP_STATIC}\n`);
  t.deepEqual(JSON.parse((await clients[0]!.next())!), { result: {} });
  t.deepEqual(JSON.parse((await clients[0]!.next())!), STATIC_REPLY);
  for (const c of clients) c.close();
});

test('a request split over several writes is answered once complete', async (t) => {
  const { server } = await start(t);
  const c = new Client(server.path);
  const text = `${LOOKUP_STATIC}\n`;
  c.socket.write(text.slice(0, 10));
  await new Promise((r) => setTimeout(r, 30));
  c.socket.write(text.slice(10, 50));
  await new Promise((r) => setTimeout(r, 30));
  c.socket.write(text.slice(50));
  t.deepEqual(JSON.parse((await c.next())!), STATIC_REPLY);
  c.close();
});

test('malformed JSON closes only that connection', async (t) => {
  const { server, metrics } = await start(t);
  const bad = new Client(server.path);
  const good = new Client(server.path);
  const reply = (await bad.request('{"method": "lookup", "parameters": ')) as Record<string, unknown>;
  t.false('result' in reply);
  t.is(await bad.next(), null);
  t.deepEqual(await good.request(LOOKUP_STATIC), STATIC_REPLY);
  t.regex(await metricText(metrics, 'gslbd_powerdns_protocol_errors_total'), /reason="malformed_json"} 1/);
  good.close();
});

test('an unknown method closes only that connection', async (t) => {
  const { server } = await start(t);
  const bad = new Client(server.path);
  const good = new Client(server.path);
  t.deepEqual(await bad.request('{"method": "shutdown", "parameters": {}}'), { error: 'unknown method "shutdown"' });
  t.is(await bad.next(), null);
  t.deepEqual(await good.request(LOOKUP_STATIC), STATIC_REPLY);
  good.close();
});

test('an oversized line closes only that connection, even before its newline arrives', async (t) => {
  const { server, metrics } = await start(t, { maxRequestBytes: 1024 });
  const bad = new Client(server.path);
  const good = new Client(server.path);
  bad.socket.write(`{"method": "lookup", "parameters": {"qname": "${'a'.repeat(2000)}`);
  t.deepEqual(JSON.parse((await bad.next())!), { error: 'request longer than 1024 bytes' });
  t.is(await bad.next(), null);
  t.deepEqual(await good.request(LOOKUP_STATIC), STATIC_REPLY);
  t.regex(await metricText(metrics, 'gslbd_powerdns_protocol_errors_total'), /reason="oversized"} 1/);
  good.close();
});

test('an oversized line gets its error reply and the connection is closed even while the peer keeps sending', async (t) => {
  const { server } = await start(t, { maxRequestBytes: 1024 });
  // allowHalfOpen: the peer does not answer the server's FIN; only the server's close ends it.
  const bad = connect({ path: server.path, allowHalfOpen: true });
  bad.on('error', () => undefined);
  bad.setEncoding('utf8');
  const closed = new Promise<void>((r) => bad.once('close', () => r()));
  const reply = new Promise<string>((r) => bad.once('data', (d: string) => r(d)));
  bad.write(Buffer.alloc(2000, 0x61));
  t.is(await reply, `${JSON.stringify({ error: 'request longer than 1024 bytes' })}\n`);
  // Still sending after the error reply: a closed socket fails the writes (EPIPE), an open one reads on.
  const flood = setInterval(() => bad.writable && bad.write(Buffer.alloc(4096, 0x61)), 5);
  t.teardown(() => {
    clearInterval(flood);
    bad.destroy();
  });
  const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open after 5 s'), 5000))]);
  t.is(outcome, 'closed');
});

test('a connection without a complete request within requestTimeoutMs is closed; an idle one between requests is kept', async (t) => {
  const { server, metrics } = await start(t, { requestTimeoutMs: 300 });
  const silent = new Client(server.path);
  const partial = new Client(server.path);
  // A connection that has completed a request. Its first request races the same 300 ms deadline;
  // on a loaded machine it can lose, so a new one is tried (each loss is one more timeout counted).
  let idle = new Client(server.path);
  let lostRaces = 0;
  await waitFor(
    'a connection with one request answered',
    async () => {
      if ((await idle.request(LOOKUP_STATIC)) !== null) return true;
      lostRaces++;
      idle = new Client(server.path);
      return false;
    },
    10_000,
  );
  // A request trickled a byte at a time never completes: the deadline is not restarted by bytes.
  const text = `${LOOKUP_STATIC}\n`;
  let i = 0;
  const trickle = setInterval(() => i < text.length - 1 && partial.socket.write(text[i++]!), 50);
  t.teardown(() => clearInterval(trickle));
  const started = Date.now();
  t.is(await silent.next(), null);
  t.is(await partial.next(), null);
  t.true(Date.now() - started < 4000, `closed after ${Date.now() - started} ms (deadline 300 ms)`);
  await new Promise((r) => setTimeout(r, 400));
  t.deepEqual(await idle.request(LOOKUP_STATIC), STATIC_REPLY, 'idle between requests: still open');
  t.regex(await metricText(metrics, 'gslbd_powerdns_protocol_errors_total'), new RegExp(`reason="request_timeout"} ${2 + lostRaces}`));
  idle.close();
});

test('at maxConnections a new connection replaces one stuck before a complete request for half requestTimeoutMs', async (t) => {
  const { server } = await start(t, { maxConnections: 2, requestTimeoutMs: 2000 });
  const idle = new Client(server.path);
  t.deepEqual(await idle.request(LOOKUP_STATIC), STATIC_REPLY);
  const silent = new Client(server.path);
  await new Promise((r) => setTimeout(r, 1200));
  const fresh = new Client(server.path);
  t.deepEqual(await fresh.request(LOOKUP_STATIC), STATIC_REPLY);
  t.is(await silent.next(), null, 'the connection that never sent a request made room');
  t.deepEqual(await idle.request(LOOKUP_STATIC), STATIC_REPLY, 'an idle pdns connection is never chosen');
  idle.close();
  fresh.close();
});

test('back-pressure: a peer that does not read its replies gets them all later, with one drain listener (no MaxListenersExceededWarning)', async (t) => {
  const { server } = await start(t);
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.name);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const count = 20000;
  const socket = connect(server.path);
  t.teardown(() => socket.destroy());
  socket.pause();
  // Not awaited: the server stops reading while its replies wait, so the write completes only later.
  socket.write(`${LOOKUP_STATIC}\n`.repeat(count));
  await new Promise((r) => setTimeout(r, 1000));
  let replies = 0;
  const all = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) if (++replies === count) resolve();
    });
  });
  socket.resume();
  await Promise.race([all, new Promise((r) => setTimeout(r, 30000))]);
  t.is(replies, count);
  t.deepEqual(
    warnings.filter((w) => w === 'MaxListenersExceededWarning'),
    [],
  );
});

test('a client that disconnects mid-line leaves the others serving', async (t) => {
  const { server, metrics } = await start(t);
  const gone = new Client(server.path);
  const good = new Client(server.path);
  t.deepEqual(await good.request(LOOKUP_STATIC), STATIC_REPLY);
  gone.socket.write('{"method": "lookup", "param');
  await new Promise((r) => setTimeout(r, 30));
  gone.close();
  t.deepEqual(await good.request(LOOKUP_STATIC), STATIC_REPLY);
  t.regex(
    await eventually(
      'the disconnect counted',
      () => metricText(metrics, 'gslbd_powerdns_protocol_errors_total'),
      (text) => text.includes('disconnect_mid_request'),
    ),
    /reason="disconnect_mid_request"} 1/,
  );
  good.close();
});

test('connections beyond maxConnections are closed at once', async (t) => {
  const { server, metrics } = await start(t, { maxConnections: 2 });
  const a = new Client(server.path);
  const b = new Client(server.path);
  t.deepEqual(await a.request(LOOKUP_STATIC), STATIC_REPLY);
  t.deepEqual(await b.request(LOOKUP_STATIC), STATIC_REPLY);
  const c = new Client(server.path);
  t.is(await c.next(), null);
  t.regex(await metricText(metrics, 'gslbd_powerdns_connections_total'), /result="rejected"} 1/);
  a.close();
  await eventually(
    'one connection left',
    () => metricText(metrics, 'gslbd_powerdns_connections'),
    (text) => /instance=""} 1$/m.test(text),
  );
  const d = new Client(server.path);
  t.deepEqual(await d.request(LOOKUP_STATIC), STATIC_REPLY);
  b.close();
  d.close();
});

test('the connection gauge is labelled by instance and drops the label when its last connection closes', async (t) => {
  const { server, metrics } = await start(t);
  const a = new Client(server.path);
  const b = new Client(server.path);
  const init = (instance: string): string => JSON.stringify({ method: 'initialize', parameters: { path: server.path, instance } });
  await a.request(init('edge1'));
  await b.request(init('edge1'));
  t.regex(await metricText(metrics, 'gslbd_powerdns_connections'), /gslbd_powerdns_connections{instance="edge1"} 2/);
  a.close();
  b.close();
  t.notRegex(
    await eventually(
      'the edge1 label dropped',
      () => metricText(metrics, 'gslbd_powerdns_connections'),
      (text) => !text.includes('edge1'),
    ),
    /edge1/,
  );
});

test('the socket gets the configured mode and is removed on stop', async (t) => {
  const { server } = await start(t, { mode: '0600' });
  t.is(statSync(server.path).mode & 0o777, 0o600);
  await server.stop();
  t.throws(() => statSync(server.path));
});

test('a stale socket file is replaced; a live socket or a regular file is an error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { engine } = fixtureEngine();
  const cfg = { path: 'x', mode: '0660', maxConnections: 4, maxRequestBytes: 4096, requestTimeoutMs: 10000 };

  // A socket left behind by a process that was killed (SIGKILL: no chance to unlink it).
  const stalePath = join(dir, 'stale.sock');
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stalePath)}, () => console.log('up'))`]);
  await new Promise<void>((r) => child.stdout.once('data', () => r()));
  child.kill('SIGKILL');
  await new Promise<void>((r) => child.once('exit', () => r()));
  t.true(statSync(stalePath).isSocket());
  const replacing = powerDnsFrontDoor(engine, new EngineMetrics(), engine.log, cfg, stalePath);
  await replacing.start();
  const c = new Client(stalePath);
  t.deepEqual(await c.request(LOOKUP_STATIC), STATIC_REPLY);
  c.close();

  // The same path while that server listens: refused.
  const second = powerDnsFrontDoor(engine, new EngineMetrics(), engine.log, cfg, stalePath);
  await t.throwsAsync(second.start(), { message: /in use by another process/ });
  await replacing.stop();

  const filePath = join(dir, 'file');
  writeFileSync(filePath, 'not a socket');
  await t.throwsAsync(powerDnsFrontDoor(engine, new EngineMetrics(), engine.log, cfg, filePath).start(), { message: /is not a socket/ });

  await t.throwsAsync(powerDnsFrontDoor(engine, new EngineMetrics(), engine.log, cfg, join(dir, 'x'.repeat(120))).start(), {
    message: /longer than 107 bytes/,
  });
});
