import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { Engine } from '../../pipeline/engine.js';
import { startGslbd, type RunningGslbd } from '../../process/gslbdProcess.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { CompactTestClient, decodeEngineFrame, encodeQuery, frame, wireName } from '../../../test/support/compactClient.js';
import { fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { compactAnswerer } from './compactAnswer.js';
import { CompactServer } from './compactServer.js';
import { decodeQuery, encodeAnswer, ErrorCode, FrameKind, readHeader, type AnswerFrame, type CompactQuery } from './frameCodec.js';

const ZONE = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: v6, type: AAAA, data: "2001:db8::10" }
datacenters:
  - { name: us-east, location: North America.US }
  - { name: eu-west, location: Europe.NL }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.10 }
      - { dc: eu-west, address: 198.51.100.10 }
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [eu-west] } }
`;

interface Fixture {
  gslbd: RunningGslbd;
  socket: string;
  dir: string;
}

/** Starts an engine with only a compact listener, in a short temporary folder (Unix paths ≤ 107 bytes). */
async function start(extra = ''): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-c-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, `listeners:\n  compact: { path: engine.sock${extra} }\n${ZONE}`);
  const gslbd = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  return { gslbd, socket: join(dir, 'engine.sock'), dir };
}

async function stop(f: Fixture): Promise<void> {
  await f.gslbd.stop();
  rmSync(f.dir, { recursive: true, force: true });
}

const query = (id: number, qname: string, qtype = 1, ecs?: string) =>
  encodeQuery({ id, qtype, qclass: 1, transport: 0, sourceAddress: '192.0.2.99', sourcePort: 5300, qname, ecs });

test('answers static and GSLB names with AA, echoes the question case, and refuses names outside its zones', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const c = await CompactTestClient.open(f.socket);
  c.send(query(1, 'NS1.Example.TEST'));
  c.send(query(2, 'www.example.test'));
  c.send(query(3, 'www.example.test', 28));
  c.send(query(4, 'nope.example.test'));
  c.send(query(5, 'www.example.org'));
  t.like(await c.next(), { kind: 'ANSWER', id: 1, flags: 1, rcode: 0, answers: [{ name: 'NS1.Example.TEST', type: 'A', data: '192.0.2.53' }] });
  t.like(await c.next(), { kind: 'ANSWER', id: 2, flags: 1, rcode: 0, answers: [{ name: 'www.example.test', type: 'A', ttl: 30, data: '198.51.100.10' }] });
  const nodata = await c.next();
  t.like(nodata, { kind: 'ANSWER', id: 3, flags: 1, rcode: 0, answers: [], authorities: [{ type: 'SOA' }] });
  t.like(await c.next(), { kind: 'ANSWER', id: 4, flags: 1, rcode: 3, authorities: [{ type: 'SOA' }] });
  t.like(await c.next(), { kind: 'ANSWER', id: 5, flags: 2, rcode: 5, answers: [], authorities: [] });
  const metrics = await f.gslbd.metrics.registry.getSingleMetricAsString('gslbd_dns_queries_total');
  t.regex(metrics, /gslbd_dns_queries_total\{transport="compact",rcode="NOERROR"\} 3/);
  c.close();
});

test('ECS: the engine computes the scope to echo; malformed ECS is FORMERR; IPv4-mapped ECS keeps 96 + the IPv4 scope', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const c = await CompactTestClient.open(f.socket);
  c.send(query(1, 'ns1.example.test', 1, '00011800c63364'));
  c.send(query(2, 'www.example.test', 1, '00031800c63364'));
  c.send(query(3, 'www.example.test', 1, '00011801c63364'));
  c.send(query(4, 'www.example.test', 1, '0002780000000000000000000000ffffc63364'));
  t.like(await c.next(), { id: 1, rcode: 0, ecsScope: 0, clientScope: 0 });
  t.like(await c.next(), { id: 2, rcode: 1, flags: 0, answers: [] });
  t.like(await c.next(), { id: 3, rcode: 1 });
  const mapped = await c.next();
  t.like(mapped, { id: 4, rcode: 0 });
  if (mapped.kind !== 'ANSWER') return;
  t.is(mapped.ecsScope, mapped.clientScope === 0 ? 0 : 96 + mapped.clientScope);
  c.close();
});

test('zone transfers are REFUSED (not "not ours"); MAILA/MAILB/TKEY NOTIMP; TSIG and OPT as a question FORMERR', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const c = await CompactTestClient.open(f.socket);
  const cases: [qtype: number, rcode: number][] = [
    [252, 5],
    [251, 5],
    [253, 4],
    [254, 4],
    [249, 4],
    [250, 1],
    [41, 1],
  ];
  cases.forEach(([qtype], i) => c.send(query(i + 1, 'example.test', qtype)));
  for (const [i, [qtype, rcode]] of cases.entries()) {
    t.like(await c.next(), { kind: 'ANSWER', id: i + 1, flags: 0, rcode, answers: [], authorities: [] }, `qtype ${qtype}`);
  }
  c.close();
});

test('pipelined queries are all answered, ids matched, in one burst', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const c = await CompactTestClient.open(f.socket);
  const n = 500;
  c.send(Buffer.concat(Array.from({ length: n }, (_, i) => query(1000 + i, i % 2 ? 'www.example.test' : 'ns1.example.test'))));
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push((await c.next()).id);
  t.deepEqual(
    ids,
    Array.from({ length: n }, (_, i) => 1000 + i),
  );
  c.send(frame(FrameKind.PING, 0, 77, Buffer.alloc(0)));
  t.deepEqual(await c.next(), { kind: 'PONG', id: 77, state: 1 });
  c.close();
});

test('garbage closes that connection only; unknown kinds and bad bodies get ERROR frames; the engine keeps serving', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const healthy = await CompactTestClient.open(f.socket);

  const noHello = await CompactTestClient.open(f.socket, false);
  noHello.send(query(9, 'ns1.example.test'));
  t.like(await noHello.next(), { kind: 'ERROR', id: 9, code: ErrorCode.BAD_REQUEST });
  await t.notThrowsAsync(noHello.waitClosed());

  const badVersionHello = await CompactTestClient.open(f.socket, false);
  badVersionHello.send(frame(FrameKind.HELLO, 0, 0, Buffer.from('0203000000000400' + '00', 'hex')));
  t.like(await badVersionHello.next(), { kind: 'ERROR', code: ErrorCode.UNSUPPORTED_VERSION });
  await t.notThrowsAsync(badVersionHello.waitClosed());

  const oversized = await CompactTestClient.open(f.socket);
  oversized.send(frame(FrameKind.QUERY, 0, 1, Buffer.alloc(5000)));
  await t.notThrowsAsync(oversized.waitClosed());

  const tooShort = await CompactTestClient.open(f.socket);
  tooShort.send(Buffer.from('00000003010101', 'hex'));
  await t.notThrowsAsync(tooShort.waitClosed());

  const noise = await CompactTestClient.open(f.socket);
  let x = 12345;
  noise.send(Buffer.from(Array.from({ length: 4096 }, () => ((x = (x * 1103515245 + 12345) >>> 0) >>> 16) & 255)));
  await t.notThrowsAsync(noise.waitClosed());

  const lenient = await CompactTestClient.open(f.socket);
  lenient.send(frame(200, 0, 31, Buffer.from('hello')));
  lenient.send(frame(FrameKind.QUERY, 0, 32, Buffer.from('0001', 'hex')));
  lenient.send(frame(FrameKind.QUERY, 0, 33, Buffer.concat([Buffer.from('0001000100000000', 'hex'), Buffer.from([5, 97])])));
  lenient.send(frame(FrameKind.HELLO, 0, 0, Buffer.from('010100000000040000', 'hex')));
  lenient.send(query(34, 'ns1.example.test'));
  t.like(await lenient.next(), { kind: 'ERROR', id: 31, code: ErrorCode.UNKNOWN_KIND, message: 'unknown frame kind 200' });
  t.like(await lenient.next(), { kind: 'ERROR', id: 32, code: ErrorCode.BAD_REQUEST });
  t.like(await lenient.next(), { kind: 'ERROR', id: 33, code: ErrorCode.BAD_REQUEST, message: 'question name runs past the frame' });
  t.like(await lenient.next(), { kind: 'ERROR', id: 0, code: ErrorCode.BAD_REQUEST });
  t.like(await lenient.next(), { kind: 'ANSWER', id: 34, rcode: 0 });
  lenient.send(frame(FrameKind.PING, 0, 35, Buffer.alloc(0), 2));
  t.like(await lenient.next(), { kind: 'ERROR', id: 35, code: ErrorCode.UNSUPPORTED_VERSION });
  await t.notThrowsAsync(lenient.waitClosed());

  healthy.send(query(2, 'www.example.test'));
  t.like(await healthy.next(), { kind: 'ANSWER', id: 2, rcode: 0 });
  const errors = await f.gslbd.metrics.registry.getSingleMetricAsString('gslbd_compact_protocol_errors_total');
  t.regex(errors, /reason="framing"\} 3/);
  healthy.close();
});

// Serial: answering the 20,000-query burst holds this worker's event loop for seconds on a busy
// machine, which would starve the other tests' engines running beside it.
test.serial('backpressure: a peer that does not read stops being read, others are served, and nothing is lost', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const slow = await CompactTestClient.open(f.socket);
  slow.socket.pause();
  const n = 20000;
  const burst = Buffer.concat(Array.from({ length: n }, (_, i) => query(i + 1, 'www.example.test')));
  slow.send(burst);
  const other = await CompactTestClient.open(f.socket);
  // Time for the burst to fill the slow peer's socket; the other peer must be answered while the
  // slow one still does not read (the bound is only there to fail instead of hanging: on a loaded
  // machine the burst alone can take seconds to process).
  await new Promise((r) => setTimeout(r, 300));
  other.send(query(1, 'ns1.example.test'));
  t.like(await other.next(15_000), { kind: 'ANSWER', id: 1 });
  slow.socket.resume();
  let last = 0;
  for (let i = 0; i < n; i++) last = (await slow.next(20000)).id;
  t.is(last, n);
  slow.close();
  other.close();
});

test('connections beyond maxConnections are closed at once', async (t) => {
  const f = await start(', maxConnections: 2');
  t.teardown(() => stop(f));
  const a = await CompactTestClient.open(f.socket);
  const b = await CompactTestClient.open(f.socket);
  const c = await CompactTestClient.open(f.socket, false);
  await t.notThrowsAsync(c.waitClosed());
  a.send(query(1, 'ns1.example.test'));
  t.like(await a.next(), { id: 1, rcode: 0 });
  a.close();
  b.close();
});

test('a connection with no complete frame for idleTimeoutMs is closed, trickled bytes or not; a PINGing one stays', async (t) => {
  // PINGs every 50 ms keep a connection open only while the event loop keeps time: 1.5 s leaves a
  // loaded machine's stalls room (300 ms closed the PINGing connection at load 25).
  const f = await start(', idleTimeoutMs: 1500');
  t.teardown(() => stop(f));
  const noHello = await CompactTestClient.open(f.socket, false);
  const trickling = await CompactTestClient.open(f.socket);
  const pinging = await CompactTestClient.open(f.socket);
  const partial = query(7, 'ns1.example.test');
  let i = 0;
  const timer = setInterval(() => {
    if (i < partial.length - 1) trickling.send(partial.subarray(i, ++i));
    pinging.send(frame(FrameKind.PING, 0, 9, Buffer.alloc(0)));
  }, 50);
  t.teardown(() => clearInterval(timer));
  const started = Date.now();
  await t.notThrowsAsync(noHello.waitClosed());
  await t.notThrowsAsync(trickling.waitClosed());
  t.true(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms (idle timeout 1500 ms)`);
  clearInterval(timer);
  pinging.send(query(1, 'ns1.example.test'));
  let reply = await pinging.next();
  while (reply.kind === 'PONG') reply = await pinging.next();
  t.like(reply, { kind: 'ANSWER', id: 1, rcode: 0 });
  pinging.close();
});

test('at maxConnections a new connection replaces one with no complete frame for half idleTimeoutMs', async (t) => {
  const f = await start(', maxConnections: 2, idleTimeoutMs: 6000');
  t.teardown(() => stop(f));
  const a = await CompactTestClient.open(f.socket, false);
  const b = await CompactTestClient.open(f.socket, false);
  await new Promise((r) => setTimeout(r, 3100));
  const c = await CompactTestClient.open(f.socket);
  c.send(query(1, 'ns1.example.test'));
  t.like(await c.next(), { kind: 'ANSWER', id: 1, rcode: 0 });
  await t.notThrowsAsync(a.waitClosed(5000), 'the connection idle longest made room');
  t.false(b.closed);
  c.close();
  b.close();
});

test('a dead socket file is replaced; a live one, a non-socket or a too long path is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-c-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f = await start();
  const deps = { engine: f.gslbd.engine, metrics: f.gslbd.metrics, log: f.gslbd.log };
  const cfg = { path: 'x', mode: '0660', maxConnections: 4, maxFrameBytes: 4096, idleTimeoutMs: 30000 };
  await t.throwsAsync(new CompactServer(deps, cfg, f.socket).start(), { message: /in use by another process/ });
  await stop(f);

  const dead = join(dir, 'dead.sock');
  // A process killed while listening leaves its socket file behind, with nobody accepting.
  spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(dead)}, () => process.kill(process.pid, 'SIGKILL'))`]);
  t.true(lstatSync(dead).isSocket());
  const f2 = await start();
  t.teardown(() => stop(f2));
  const deps2 = { engine: f2.gslbd.engine, metrics: new EngineMetrics(), log: f2.gslbd.log };
  const replaced = new CompactServer(deps2, cfg, dead);
  await t.notThrowsAsync(replaced.start());
  const c = await CompactTestClient.open(dead);
  c.send(query(5, 'ns1.example.test'));
  t.like(await c.next(), { id: 5, rcode: 0 });
  c.close();
  await replaced.stop();

  const plain = join(dir, 'plain');
  writeFileSync(plain, 'not a socket');
  await t.throwsAsync(new CompactServer(deps2, cfg, plain).start(), { message: /exists and is not a socket/ });
  await t.throwsAsync(new CompactServer(deps2, cfg, join(dir, 'x'.repeat(120))).start(), { message: /longer than 107 bytes/ });
});

test('listeners.compact is strict: unknown keys and bad modes name their path', (t) => {
  const err = t.throws(() => parseConfigText(`listeners:\n  compact: { path: a.sock, mdoe: "0600" }\n${ZONE}`), { instanceOf: ConfigError });
  t.is(err!.message, '<config>:2:28: listeners.compact.mdoe: unknown key (not part of the configuration schema; check the spelling)');
  const mode = t.throws(() => parseConfigText(`listeners:\n  compact: { path: a.sock, mode: "0999" }\n${ZONE}`), { instanceOf: ConfigError });
  t.regex(mode!.message, /listeners\.compact\.mode: expected an octal file mode/);
  t.like(parseConfigText(`listeners:\n  compact: { path: a.sock }\n${ZONE}`).listeners.compact, {
    path: 'a.sock',
    mode: '0660',
    maxConnections: 64,
    maxFrameBytes: 4096,
  });
});

test('question names with escapes reach the engine as the standalone listener sees them', async (t) => {
  const f = await start();
  t.teardown(() => stop(f));
  const c = await CompactTestClient.open(f.socket);
  const body = Buffer.concat([Buffer.from('0001000100010035c0000263', 'hex'), wireName('a.example.test').fill(0x2e, 1, 2)]);
  c.send(frame(FrameKind.QUERY, 0, 8, body));
  t.like(await c.next(), { kind: 'ANSWER', id: 8, rcode: 3 });
  c.close();
});

// compactAnswerer in-process on the same zone: answers, and frames of the decision cache's shared records.

function answerer(): (qname: string, ecs?: string) => AnswerFrame {
  const engine = new Engine(snapshotOf(ZONE), fixedContext(), createLogger('silent'));
  const answer = compactAnswerer({ engine, metrics: new EngineMetrics(), log: engine.log });
  return (qname, ecs) => {
    const frame = encodeQuery({ id: 1, qtype: 1, qclass: 1, transport: 0, sourceAddress: '192.0.2.99', sourcePort: 5300, qname, ecs });
    // The fixture engine answers synchronously.
    return answer(decodeQuery(frame, readHeader(frame).flags) as CompactQuery) as AnswerFrame;
  };
}

/** An answer whose frame overwrites the encoder's scratch bytes, so a byte left unwritten shows. */
const CLOBBER: AnswerFrame = {
  rcode: 0,
  authoritative: true,
  notOurs: false,
  ecsScope: 0,
  clientScope: 0,
  answers: Array.from({ length: 8 }, () => ({ name: 'z'.repeat(63), type: 'TXT' as const, ttl: 0x7a7a7a7a, data: ['z'.repeat(255)] })),
  authority: [],
  additional: [],
};

/** `encodeAnswer` after the scratch was overwritten. */
function encoded(id: number, a: AnswerFrame): string {
  encodeAnswer(0, CLOBBER);
  return encodeAnswer(id, a).toString('hex');
}

/** The same answer with every record copied into a new, unfrozen object: the per-query encoding path. */
const unshared = (a: AnswerFrame): AnswerFrame => ({
  ...a,
  answers: a.answers.map((r) => ({ ...r })),
  authority: a.authority.map((r) => ({ ...r })),
  additional: a.additional.map((r) => ({ ...r })),
});

test('a decision served from the cache: the same frozen records each query, framed byte for byte as records built per query', (t) => {
  const ask = answerer();
  const ecs = '00011800080808'; // family 1, /24, 8.8.8.0
  const first = ask('www.example.test', ecs);
  const second = ask('www.example.test', ecs);
  const third = ask('www.example.test', ecs);
  t.true(Object.isFrozen(second.answers[0]), 'the decision cache serves the second query');
  t.is(third.answers[0], second.answers[0], 'the same record object');
  for (const a of [first, second, third, second]) t.is(encoded(7, a), encoded(7, unshared(a)));
  const d = decodeEngineFrame(encodeAnswer(7, third));
  t.like(d, { kind: 'ANSWER', rcode: 0, answers: [{ name: 'www.example.test', type: 'A', ttl: 30 }] });
});

test('the question case is echoed by shared and per-query records alike, before and after the cache serves the decision', (t) => {
  const ask = answerer();
  const ecs = '00011800c1000e';
  for (const qname of ['www.example.test', 'WWW.Example.TEST', 'www.example.test', 'wWw.example.test']) {
    const a = ask(qname, ecs);
    t.is(encoded(9, a), encoded(9, unshared(a)), qname);
    const d = decodeEngineFrame(encodeAnswer(9, a));
    if (d.kind !== 'ANSWER') return t.fail(d.kind);
    t.deepEqual(
      d.answers.map((r) => r.name),
      [qname],
      qname,
    );
  }
});

test('shared records keep their own bytes: frozen records of different data, names and sizes framed as built per query', (t) => {
  const records = [
    Object.freeze({ name: 'a.example.test', type: 'A' as const, ttl: 30, data: '192.0.2.1' }),
    Object.freeze({ name: 'A.Example.Test', type: 'A' as const, ttl: 30, data: '192.0.2.1' }),
    Object.freeze({ name: 'a.example.test', type: 'AAAA' as const, ttl: 60, data: '2001:db8::1' }),
    Object.freeze({ name: 'txt.example.test', type: 'TXT' as const, ttl: 5, data: Object.freeze(['x'.repeat(200)]) as string[] }),
    Object.freeze({ name: 'c.example.test', type: 'CNAME' as const, ttl: 300, data: 'Target.Example.TEST' }),
  ];
  const frame = (answers: typeof records): string =>
    encoded(3, { rcode: 0, authoritative: true, notOurs: false, ecsScope: 0, clientScope: 0, answers, authority: [], additional: [] });
  const expected = frame(records.map((r) => ({ ...r })));
  t.is(frame(records), expected, 'first use: encoded and remembered');
  t.is(frame(records), expected, 'reused');
  t.is(frame([...records].reverse()), frame(records.map((r) => ({ ...r })).reverse()), 'in another order');
});

test('an answer of shared records over the frame limit is SERVFAIL with no records, as one built per query', (t) => {
  const big = Object.freeze({ name: 'big.example.test', type: 'TXT' as const, ttl: 1, data: Object.freeze([Buffer.alloc(255, 97).toString()]) as string[] });
  const answers = Array.from({ length: 600 }, () => big);
  const a: AnswerFrame = { rcode: 0, authoritative: true, notOurs: false, ecsScope: 0, clientScope: 0, answers, authority: [], additional: [] };
  t.is(encoded(4, a), encoded(4, unshared(a)));
  t.like(decodeEngineFrame(encodeAnswer(4, a)), { kind: 'ANSWER', rcode: 2, answers: [] });
});
