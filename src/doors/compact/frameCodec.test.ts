import { readFileSync } from 'node:fs';
import test from 'ava';
import fc from 'fast-check';
import type { ResourceRecord } from '../../core/dns/records.js';
import { formatIp } from '../../core/net/ipAddress.js';
import { decodeEngineFrame, encodeHello, rrCodec, encodePing, encodeQuery, frame, type QueryFields } from '../../../test/support/compactClient.js';
import { decodeHello, decodeQuery, encodeAnswer, encodeError, encodeHelloAck, encodePong, readHeader } from './frameCodec.js';
import { FrameReader, FramingError } from './frameReader.js';

interface Vector {
  name: string;
  hex: string;
  fields: Record<string, unknown> & { kind: string; id: number };
}
type Rec = { text: string; record: ResourceRecord };

const vectors = (JSON.parse(readFileSync(new URL('../../../test/fixtures/compact/vectors.json', import.meta.url), 'utf8')) as { frames: Vector[] }).frames;
const byKind = (kind: string): Vector[] => vectors.filter((v) => v.fields.kind === kind);

test('the golden vectors cover every frame kind', (t) => {
  t.deepEqual([...new Set(vectors.map((v) => v.fields.kind))].sort(), ['ANSWER', 'ERROR', 'HELLO', 'HELLO_ACK', 'PING', 'PONG', 'QUERY']);
});

for (const v of byKind('QUERY')) {
  test(`QUERY vector ${v.name}: decodes to its fields, and the test shim encodes the same bytes`, (t) => {
    const bytes = Buffer.from(v.hex, 'hex');
    const f = v.fields as unknown as QueryFields & { kind: string };
    const h = readHeader(bytes);
    t.is(h.length, bytes.length - 4);
    t.is(h.id, f.id);
    const q = decodeQuery(bytes, h.flags);
    if (typeof q === 'string') return t.fail(q);
    t.is(q.qtype, f.qtype);
    t.is(q.qclass, f.qclass);
    t.is(q.transport, f.transport);
    t.is(q.sourcePort, f.sourcePort);
    t.is(q.source ? formatIp(q.source) : undefined, f.sourceAddress);
    t.is(q.ecs?.toString('hex'), f.ecs);
    t.is(q.qname, f.qname);
    t.is(encodeQuery(f).toString('hex'), v.hex);
  });
}

for (const v of byKind('ANSWER')) {
  test(`ANSWER vector ${v.name}: the engine encodes exactly these bytes`, (t) => {
    const f = v.fields as unknown as {
      id: number;
      rcode: number;
      authoritative: boolean;
      notOurs: boolean;
      ecsScope: number;
      clientScope: number;
      answer: Rec[];
      authority: Rec[];
      additional: Rec[];
    };
    const bytes = encodeAnswer(f.id, {
      rcode: f.rcode,
      authoritative: f.authoritative,
      notOurs: f.notOurs,
      ecsScope: f.ecsScope,
      clientScope: f.clientScope,
      answers: f.answer.map((r) => r.record),
      authority: f.authority.map((r) => r.record),
      additional: f.additional.map((r) => r.record),
    });
    t.is(bytes.toString('hex'), v.hex);
    const d = decodeEngineFrame(bytes);
    if (d.kind !== 'ANSWER') return t.fail(d.kind);
    t.is(d.flags, (f.authoritative ? 1 : 0) | (f.notOurs ? 2 : 0));
    t.deepEqual(
      [...d.answers, ...d.authorities, ...d.additionals].map((r) => `${r.name} ${r.type}`),
      [...f.answer, ...f.authority, ...f.additional].map((r) => `${r.record.name} ${r.record.type}`),
    );
    // Frozen records (the decision cache's shared ones) take the remembered-encoding path: the same bytes, first use and reuse.
    const frozen = (rs: Rec[]): ResourceRecord[] => rs.map((r) => Object.freeze({ ...r.record }));
    const shared = { ...f, answers: frozen(f.answer), authority: frozen(f.authority), additional: frozen(f.additional) };
    t.is(encodeAnswer(f.id, shared).toString('hex'), v.hex);
    t.is(encodeAnswer(f.id, shared).toString('hex'), v.hex);
  });
}

test('ANSWER records are the same RR bytes dns-packet writes, uncompressed', (t) => {
  const v = vectors.find((x) => x.name === 'answer-a-aa-scope-24')!;
  const rr = rrCodec.encode({ name: 'www.example.org', type: 'A', ttl: 30, class: 'IN', data: '203.0.113.10' });
  t.true(v.hex.endsWith(rr.toString('hex')));
});

test('HELLO, HELLO_ACK, ERROR, PING and PONG vectors', (t) => {
  const hello = byKind('HELLO')[0]!;
  const hf = hello.fields as unknown as { minVersion: number; maxVersion: number; maxInflight: number; name: string };
  t.deepEqual(decodeHello(Buffer.from(hello.hex, 'hex')), { minVersion: hf.minVersion, maxVersion: hf.maxVersion, maxInflight: hf.maxInflight, name: hf.name });
  t.is(encodeHello(hf.minVersion, hf.maxVersion, hf.maxInflight, hf.name).toString('hex'), hello.hex);

  const ack = byKind('HELLO_ACK')[0]!;
  const af = ack.fields as unknown as { version: number; state: number; maxInflight: number; name: string };
  t.is(encodeHelloAck(af.version, af.state, af.maxInflight, af.name).toString('hex'), ack.hex);
  t.deepEqual(decodeEngineFrame(Buffer.from(ack.hex, 'hex')), { kind: 'HELLO_ACK', id: 0, ...af });

  const err = byKind('ERROR')[0]!;
  const ef = err.fields as unknown as { id: number; code: number; message: string };
  t.is(encodeError(ef.id, ef.code, ef.message).toString('hex'), err.hex);
  t.deepEqual(decodeEngineFrame(Buffer.from(err.hex, 'hex')), { kind: 'ERROR', ...ef });

  t.is(encodePing(byKind('PING')[0]!.fields.id).toString('hex'), byKind('PING')[0]!.hex);
  const pong = byKind('PONG')[0]!;
  t.is(encodePong(pong.fields.id, pong.fields.state as number).toString('hex'), pong.hex);
});

test('malformed QUERY bodies give a reason, never a throw', (t) => {
  const good = Buffer.from(byKind('QUERY')[0]!.hex, 'hex');
  const h = readHeader(good);
  for (let cut = 12; cut < good.length; cut++) {
    const r = decodeQuery(good.subarray(0, cut), h.flags);
    t.is(typeof r, 'string', `cut at ${cut}`);
  }
  t.is(decodeQuery(frame(1, 0, 1, Buffer.from('0001000100030000', 'hex')), 0), 'source family 3 is not 0, 1 or 2');
  t.is(decodeQuery(frame(1, 0, 1, Buffer.from('000100010000000040', 'hex')), 0), 'compressed or extended label in the question name');
  const long = Buffer.concat([Buffer.from('0001000100000000', 'hex'), Buffer.alloc(5 * 64, 63)]);
  for (let i = 0; i < 5; i++) long[8 + i * 64] = 63;
  t.is(decodeQuery(frame(1, 0, 1, long), 0), 'question name longer than 255 octets');
});

test('question names: bytes that need escapes keep the presentation form of wireQuery.ts; the longest legal name decodes', (t) => {
  const withName = (wire: number[]): Buffer => frame(1, 0, 1, Buffer.concat([Buffer.from('0001000100000000', 'hex'), Buffer.from(wire)]));
  const name = (wire: number[]): unknown => (decodeQuery(withName(wire), 0) as { qname: string }).qname;
  t.is(name([3, 0x57, 0x77, 0x57, 4, 0x54, 0x65, 0x73, 0x74, 0]), 'WwW.Test');
  t.is(name([3, 0x61, 0x2e, 0x62, 4, 0x74, 0x65, 0x73, 0x74, 0]), 'a\\.b.test');
  t.is(name([4, 0x78, 0x20, 0x5c, 0xff, 1, 0x2d, 0]), 'x\\032\\\\\\255.-');
  t.is(name([1, 0x61, 1, 0x00, 0]), 'a.\\000');
  t.is(name([0]), '');
  const longest = [...Array.from({ length: 3 }, () => [63, ...Buffer.alloc(63, 0x61)]).flat(), 61, ...Buffer.alloc(61, 0x62), 0];
  t.is(longest.length, 255);
  t.is(name(longest), `${'a'.repeat(63)}.${'a'.repeat(63)}.${'a'.repeat(63)}.${'b'.repeat(61)}`);
  longest.splice(-1, 0, 0x62);
  longest[192] = 62;
  t.is(decodeQuery(withName(longest), 0), 'question name longer than 255 octets');
});

test('an answer too large for one frame becomes SERVFAIL with no records', (t) => {
  const txt: ResourceRecord = { name: 'big.example.org', type: 'TXT', ttl: 1, data: [Buffer.alloc(255, 97).toString()] };
  const bytes = encodeAnswer(1, {
    rcode: 0,
    authoritative: true,
    notOurs: false,
    ecsScope: 0,
    clientScope: 0,
    answers: Array(600).fill(txt),
    authority: [],
    additional: [],
  });
  const d = decodeEngineFrame(bytes);
  t.like(d, { kind: 'ANSWER', rcode: 2, flags: 0 });
  t.is(bytes.length, 22);
});

test('FrameReader splits a stream fed byte by byte into the same frames', (t) => {
  const stream = Buffer.concat(vectors.map((v) => Buffer.from(v.hex, 'hex')));
  const got: string[] = [];
  const reader = new FrameReader(131072, (f) => got.push(f.toString('hex')));
  for (let i = 0; i < stream.length; i++) reader.push(stream.subarray(i, i + 1));
  t.deepEqual(
    got,
    vectors.map((v) => v.hex),
  );
  const whole: string[] = [];
  new FrameReader(131072, (f) => whole.push(f.toString('hex'))).push(stream);
  t.deepEqual(whole, got);
});

test('FrameReader rejects lengths below 8 and above its limit', (t) => {
  t.throws(() => new FrameReader(4096, () => undefined).push(Buffer.from('00000007', 'hex')), { instanceOf: FramingError });
  t.throws(() => new FrameReader(4096, () => undefined).push(Buffer.from('00001001', 'hex')), { instanceOf: FramingError });
  t.notThrows(() => new FrameReader(4096, () => undefined).push(Buffer.from('00001000', 'hex')));
});

test('any bytes: decoders give a frame or a reason and the reader a frame or a FramingError, never another throw (fast-check, seed 8)', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 400 }), fc.integer({ min: 0, max: 0xffff }), (bytes, flags) => {
      const body = Buffer.from(bytes);
      const f = frame(1, flags, 1, body);
      const q = decodeQuery(f, flags);
      if (typeof q !== 'string' && (q.qtype !== body.readUInt16BE(0) || q.sourcePort !== body.readUInt16BE(6))) return false;
      decodeHello(frame(6, 0, 0, body));
      try {
        new FrameReader(4096, (x) => readHeader(x)).push(body);
      } catch (e) {
        if (!(e instanceof FramingError)) return false;
      }
      return true;
    }),
    { seed: 8, numRuns: 2000 },
  );
  t.pass();
});
