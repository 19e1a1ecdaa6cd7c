import test from 'ava';
import dnsPacket from 'dns-packet';
import { presentData } from '../dns/presentation.js';
import type { ResourceRecord } from '../dns/records.js';
import type { Answer } from '../model/query.js';
import { decodeQuery, type WireQuestion } from './wireQuery.js';
import { caseNeutralOwners, encodeReply, UNCOMPRESSED, writeRecord } from './wireResponse.js';

/** dns-packet's record and name codecs, which its typings omit. */
const codec = dnsPacket as unknown as { answer: { encode(a: unknown): Buffer }; name: { encode(n: string): Buffer } };

/**
 * The owner name in wire format, labels written out by hand for the cases dns-packet's name
 * encoder gets wrong (presentation escapes, the root name).
 */
const OWNERS: Record<string, number[]> = {
  '': [0],
  'a\\.b.example.test': [3, 0x61, 0x2e, 0x62, 7, ...Buffer.from('example'), 4, ...Buffer.from('test'), 0],
  'x\\032y.example.test': [3, 0x78, 0x20, 0x79, 7, ...Buffer.from('example'), 4, ...Buffer.from('test'), 0],
};

/** The owner name, then dns-packet's encoding of type, class, TTL and RDATA (its encoder never compresses). */
function reference(rr: ResourceRecord): Buffer {
  const data = rr.type === 'TXT' ? (rr.data as string[]).map((s) => Buffer.from(s)) : rr.data;
  const rest = codec.answer.encode({ name: 'x', type: rr.type, ttl: rr.ttl, data }).subarray(3);
  const owner = rr.name in OWNERS ? Buffer.from(OWNERS[rr.name]!) : codec.name.encode(rr.name);
  return Buffer.concat([owner, rest]);
}

function written(rr: ResourceRecord): Buffer {
  const buf = Buffer.alloc(1024, 0xee);
  return buf.subarray(0, writeRecord(buf, 0, rr, UNCOMPRESSED));
}

const SOA = { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 7, refresh: 3600, retry: 600, expire: 604800, minimum: 60 };
const RECORDS: ResourceRecord[] = [
  { name: 'www.example.test', type: 'A', ttl: 30, data: '198.51.100.10' },
  { name: 'WwW.Example.TEST', type: 'A', ttl: 30, data: '198.51.100.10' },
  { name: 'v6.example.test', type: 'AAAA', ttl: 300, data: '2001:db8::10' },
  { name: 'example.test', type: 'SOA', ttl: 60, data: SOA },
  { name: 'example.test', type: 'NS', ttl: 300, data: 'ns1.example.test' },
  { name: 'alias.example.test', type: 'CNAME', ttl: 300, data: 'www.example.test' },
  { name: 'example.test', type: 'MX', ttl: 300, data: { preference: 10, exchange: 'mail.example.test' } },
  { name: '_sip._udp.example.test', type: 'SRV', ttl: 300, data: { priority: 1, weight: 2, port: 5060, target: 'sip.example.test' } },
  { name: 'example.test', type: 'TXT', ttl: 300, data: ['v=spf1 -all', 'second'] },
  { name: 'example.test', type: 'CAA', ttl: 300, data: { flags: 0, tag: 'issue', value: 'ca.example' } },
  { name: '', type: 'NS', ttl: 300, data: 'a.root.test' },
  { name: '*.example.test', type: 'A', ttl: 30, data: '192.0.2.1' },
  { name: 'a\\.b.example.test', type: 'A', ttl: 30, data: '192.0.2.2' },
  { name: 'x\\032y.example.test', type: 'A', ttl: 30, data: '192.0.2.3' },
];

test('records are written as dns-packet encodes them: owner names (query case, root, escapes), every type', (t) => {
  for (const rr of RECORDS) t.deepEqual(written(rr), reference(rr), `${rr.name} ${rr.type}`);
});

test('RDATA encoded once per data value stays right when written again, for other owners and TTLs', (t) => {
  for (let round = 0; round < 3; round++) {
    for (const rr of RECORDS) {
      const again = { ...rr, name: rr.name in OWNERS ? rr.name : `r${round}.${rr.name}`, ttl: rr.ttl + round };
      t.deepEqual(written(again), reference(again), `${again.name} ${again.type}`);
    }
  }
  t.deepEqual(RECORDS[8]!.data, ['v=spf1 -all', 'second'], 'TXT data is not changed by encoding');
});

test('a record that does not fit is a RangeError', (t) => {
  const buf = Buffer.alloc(40);
  t.throws(() => writeRecord(buf, 0, { name: 'example.test', type: 'SOA', ttl: 60, data: SOA }, UNCOMPRESSED), { instanceOf: RangeError });
});

test('more distinct addresses than the RDATA cache keeps are all written right', (t) => {
  for (let i = 0; i < 10_000; i++) {
    const rr: ResourceRecord = { name: 'www.example.test', type: 'A', ttl: 30, data: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` };
    const got = written(rr);
    if (!got.equals(reference(rr))) return t.fail(`${presentData(rr.type, rr.data)}: ${got.toString('hex')}`);
  }
  t.pass();
});

/** The question of a query for `name` (letter case as given), with EDNS. */
function questionOf(name: string): WireQuestion {
  const decoded = decodeQuery(dnsPacket.encode({ type: 'query', id: 1, questions: [{ name, type: 'A', class: 'IN' }] }));
  if (decoded.kind !== 'query') throw new Error(`${name}: ${decoded.kind}`);
  return decoded.query.question;
}

/** An answer for the question name `qname` as the engine builds one: `owned` records owned by the name as asked, `others` as configured. */
function answerFor(
  qname: string,
  owned: number,
  others: Answer['answers'],
  authority: Answer['authority'] = [],
  additional: Answer['additional'] = [],
): Answer {
  const answers = Array.from({ length: owned }, (_, i) => ({ name: qname, type: 'A' as const, ttl: 30, data: `192.0.2.${i + 1}` }));
  return { rcode: 0, authoritative: true, answers: [...answers, ...others], authority, additional, scope: 0, dcs: [] };
}

/**
 * DNS 0x20 (native fast path, issue 22 item 2): where `caseNeutralOwners` holds, the reply to one
 * case variant of the question with the other variant's name written over its question is the
 * reply to the other variant, byte for byte — owners equal to the question are pointers to it,
 * whatever their case; where a name outside the question carries the query's letters, it does not
 * hold, and indeed that patch would be wrong.
 */
test('caseNeutralOwners: a reply is the same for every letter case of its question but the question', (t) => {
  const variants = ['www.example.test', 'WWW.EXAMPLE.TEST', 'wWw.ExAmPlE.tEsT'];
  const soa = { name: 'example.test', type: 'SOA' as const, ttl: 60, data: SOA };
  const kinds: [string, (qname: string) => Answer][] = [
    ['GSLB answer', (q) => answerFor(q, 2, [])],
    [
      'CNAME chain',
      (q) =>
        answerFor(q, 0, [
          { name: q, type: 'CNAME', ttl: 30, data: 'web.example.test' },
          { name: 'web.example.test', type: 'A', ttl: 30, data: '192.0.2.9' },
        ]),
    ],
    ['owner in canonical case', () => answerFor('www.example.test', 1, [])],
    ['NXDOMAIN', () => ({ ...answerFor('x', 0, [], [soa]), rcode: 3 })],
    [
      'referral with glue',
      () =>
        answerFor(
          'x',
          0,
          [],
          [{ name: 'example.test', type: 'NS', ttl: 300, data: 'ns1.example.test' }],
          [{ name: 'ns1.example.test', type: 'A', ttl: 30, data: '192.0.2.53' }],
        ),
    ],
  ];
  const header = (question: WireQuestion) => ({ id: 7, queryFlags: 0, question, udpPayloadSize: 1232 });
  for (const [kind, build] of kinds) {
    const replies = variants.map((v) => {
      const question = questionOf(v);
      const answer = build(v);
      t.true(caseNeutralOwners(answer, question), `${kind} for ${v}`);
      return { question, reply: encodeReply(header(question), answer, 1232) };
    });
    for (const { question, reply } of replies) {
      const patched = Buffer.from(replies[0]!.reply);
      question.raw.copy(patched, 12);
      t.deepEqual(patched, reply, `${kind}: ${replies[0]!.question.name} patched to ${question.name}`);
    }
  }
  // A name built from the query's letters that is not the question name: written in the query's case.
  const derived = (q: string) => answerFor(q, 0, [{ name: `${q.slice(0, 3)}-x.${q.slice(4)}`, type: 'A', ttl: 30, data: '192.0.2.1' }]);
  t.false(caseNeutralOwners(derived('WWW.EXAMPLE.TEST'), questionOf('WWW.EXAMPLE.TEST')));
  const upper = encodeReply(header(questionOf('WWW.EXAMPLE.TEST')), derived('WWW.EXAMPLE.TEST'), 1232);
  const lower = encodeReply(header(questionOf('www.example.test')), derived('www.example.test'), 1232);
  const patched = Buffer.from(upper);
  questionOf('www.example.test').raw.copy(patched, 12);
  t.notDeepEqual(patched, lower);
});
