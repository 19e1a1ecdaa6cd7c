import test from 'ava';
import { EngineMetrics } from '../../admin/metrics.js';
import { Engine } from '../../engine/engine.js';
import { createLogger } from '../../log/logger.js';
import { decodeEngineFrame, encodeQuery } from '../../../test/support/compactClient.js';
import { fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { compactAnswerer } from './compactAnswer.js';
import { decodeQuery, encodeAnswer, readHeader, type AnswerFrame, type CompactQuery } from './frameCodec.js';

/** compactAnswerer on a real snapshot: answers, and frames of the decision cache's shared records. */

const CONFIG = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
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

function answerer(): (qname: string, ecs?: string) => AnswerFrame {
  const engine = new Engine(snapshotOf(CONFIG), fixedContext(), createLogger('silent'));
  const answer = compactAnswerer({ engine, metrics: new EngineMetrics(), log: engine.log });
  return (qname, ecs) => {
    const frame = encodeQuery({ id: 1, qtype: 1, qclass: 1, transport: 0, sourceAddress: '192.0.2.99', sourcePort: 5300, qname, ecs });
    return answer(decodeQuery(frame, readHeader(frame).flags) as CompactQuery);
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
