import test from 'ava';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { clientOf, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { presentData } from '../../core/dns/presentation.js';
import type { AnswerRecord } from '../../core/dns/records.js';
import { resolve, type ExplainedSelection } from './authoritative.js';
import { RCODE } from '../../core/dns/rcode.js';
import { type Answer } from '../../core/model/query.js';

/**
 * The authoritative answer logic on a fixture zone set: query → rcode, AA, sections, scope.
 * Records are written `owner TTL TYPE data` in presentation form.
 */

const SERIAL = 1700000000; // the fixture clock (selectionFixture.snapshotOf) in seconds

const CONFIG = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test, ns2.example.test, ns.elsewhere.invalid]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: ns1, type: AAAA, data: "2001:db8::53" }
      - { name: ns2, type: A, data: 192.0.2.54 }
      - { name: "@", type: MX, data: "10 mail.example.test" }
      - { name: "@", type: TXT, data: "v=spf1 -all" }
      - { name: mail, type: A, ttl: 120, data: 192.0.2.25 }
      - { name: host.deep.sub, type: A, data: 192.0.2.60 }
      - { name: "*.wild", type: A, data: 192.0.2.70 }
      - { name: "*.wild", type: TXT, data: wildcard }
      - { name: exists.wild, type: TXT, data: real }
      - { name: "*.wc", type: CNAME, data: mail.example.test }
      - { name: alias, type: CNAME, data: www.example.test }
      - { name: chain1, type: CNAME, data: chain2.example.test }
      - { name: chain2, type: CNAME, data: mail.example.test }
      - { name: loop1, type: CNAME, data: loop2.example.test }
      - { name: loop2, type: CNAME, data: loop1.example.test }
      - { name: self, type: CNAME, data: self.example.test }
      - { name: cross, type: CNAME, data: www.other.test }
      - { name: out, type: CNAME, data: www.elsewhere.invalid }
      - { name: dangling, type: CNAME, data: nothing.example.test }
      - { name: child, type: NS, data: ns1.child.example.test }
      - { name: child, type: NS, data: ns.elsewhere.invalid }
      - { name: ns1.child, type: A, data: 192.0.2.80 }
  - name: other.test
    soa: { mname: ns1.other.test, rname: h.other.test, ttl: 30, minimum: 600 }
    ns: [ns1.example.test]
    records:
      - { name: www, type: A, data: 198.51.100.80 }
      - { name: back, type: CNAME, data: mail.example.test }
datacenters:
  - { name: eu, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: NA.US, lat: 39.0, lon: -77.5 }
services:
  - name: web
    endpoints:
      - { dc: eu, address: 192.0.2.10 }
      - { dc: us, address: 192.0.2.20 }
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] } }
`;

const geo = prefixLocationDb([{ cidr: '10.1.0.0/16', location: 'EU.NL', lat: 52.37, lon: 4.9 }]);
const snap = snapshotOf(CONFIG, geo);

const SOA = `example.test 60 SOA ns1.example.test. hostmaster.example.test. ${SERIAL} 3600 600 604800 60`;
const OTHER_SOA = `other.test 30 SOA ns1.other.test. h.other.test. ${SERIAL} 3600 600 604800 600`;

function ask(name: string, type: number | string, options: { client?: string; transport?: 'udp' | 'tcp'; explain?: ExplainedSelection[] } = {}): Answer {
  const code =
    typeof type === 'number' ? type : ({ A: 1, NS: 2, CNAME: 5, SOA: 6, MX: 15, TXT: 16, AAAA: 28, DS: 43, ANY: 255 } as Record<string, number>)[type]!;
  return resolve(
    { name, type: code, client: clientOf(options.client ?? '10.1.0.0/24'), transport: options.transport ?? 'udp' },
    snap,
    fixedContext(),
    options.explain,
  );
}

const show = (rs: readonly AnswerRecord[]): string[] => rs.map((r) => `${r.name} ${r.ttl} ${r.type} ${presentData(r.type, r.data)}`);

interface Expected {
  rcode: keyof typeof RCODE;
  aa: boolean;
  answers?: string[];
  authority?: string[];
  additional?: string[];
  scope?: number;
}

/** The answer in the comparable shape of {@link Expected} (record lines in presentation form). */
function check(a: Answer): { rcode: string; aa: boolean; answers: string[]; authority: string[]; additional: string[]; scope: number } {
  return {
    rcode: Object.entries(RCODE).find(([, v]) => v === a.rcode)?.[0] ?? String(a.rcode),
    aa: a.authoritative,
    answers: show(a.answers),
    authority: show(a.authority),
    additional: show(a.additional),
    scope: a.scope,
  };
}

const expect = (e: Expected) => ({ answers: [], authority: [], additional: [], scope: 0, ...e });

// qname, qtype → expected answer.
const table: [title: string, name: string, type: number | string, expected: Expected][] = [
  ['outside our zones → REFUSED, AA clear', 'www.elsewhere.invalid', 'A', { rcode: 'REFUSED', aa: false }],
  ['a parent of our zones → REFUSED', 'test', 'SOA', { rcode: 'REFUSED', aa: false }],
  ['missing name → NXDOMAIN with the SOA at the negative TTL', 'nothing.example.test', 'A', { rcode: 'NXDOMAIN', aa: true, authority: [SOA] }],
  ['empty non-terminal → NODATA (RFC 8020)', 'sub.example.test', 'A', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['deeper empty non-terminal → NODATA', 'deep.sub.example.test', 'A', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['below an empty non-terminal → NXDOMAIN', 'x.deep.sub.example.test', 'A', { rcode: 'NXDOMAIN', aa: true, authority: [SOA] }],
  ['existing name, other type → NODATA', 'mail.example.test', 'TXT', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['existing name, unknown type 99 → NODATA', 'mail.example.test', 99, { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['existing name, type 65280 (private use) → NODATA', 'mail.example.test', 65280, { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['static A with its own TTL', 'mail.example.test', 'A', { rcode: 'NOERROR', aa: true, answers: ['mail.example.test 120 A 192.0.2.25'] }],
  [
    'wildcard synthesis keeps the query name as owner',
    'a.wild.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['a.wild.example.test 300 A 192.0.2.70'] },
  ],
  ['wildcard covers several labels', 'a.b.wild.example.test', 'A', { rcode: 'NOERROR', aa: true, answers: ['a.b.wild.example.test 300 A 192.0.2.70'] }],
  ['wildcard, other type at the wildcard', 'a.wild.example.test', 'TXT', { rcode: 'NOERROR', aa: true, answers: ['a.wild.example.test 300 TXT "wildcard"'] }],
  ['wildcard NODATA: type the wildcard lacks', 'a.wild.example.test', 'MX', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['no wildcard when the name exists (NODATA)', 'exists.wild.example.test', 'A', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['no wildcard below an existing name without its own wildcard', 'x.exists.wild.example.test', 'A', { rcode: 'NXDOMAIN', aa: true, authority: [SOA] }],
  ['the wildcard parent is an empty non-terminal', 'wild.example.test', 'A', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['the wildcard owner asked literally', '*.wild.example.test', 'A', { rcode: 'NOERROR', aa: true, answers: ['*.wild.example.test 300 A 192.0.2.70'] }],
  [
    'wildcard CNAME is followed',
    'x.wc.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['x.wc.example.test 300 CNAME mail.example.test.', 'mail.example.test 120 A 192.0.2.25'] },
  ],
  [
    'CNAME chain inside the zone',
    'chain1.example.test',
    'A',
    {
      rcode: 'NOERROR',
      aa: true,
      answers: ['chain1.example.test 300 CNAME chain2.example.test.', 'chain2.example.test 300 CNAME mail.example.test.', 'mail.example.test 120 A 192.0.2.25'],
    },
  ],
  [
    'CNAME to a GSLB record: selection for the client, scope of its location block',
    'alias.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['alias.example.test 300 CNAME www.example.test.', 'www.example.test 30 A 192.0.2.10'], scope: 16 },
  ],
  [
    'CNAME asked for directly is not followed',
    'alias.example.test',
    'CNAME',
    { rcode: 'NOERROR', aa: true, answers: ['alias.example.test 300 CNAME www.example.test.'] },
  ],
  [
    'CNAME across two of our zones',
    'cross.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['cross.example.test 300 CNAME www.other.test.', 'www.other.test 300 A 198.51.100.80'] },
  ],
  [
    'CNAME across zones and back',
    'back.other.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['back.other.test 300 CNAME mail.example.test.', 'mail.example.test 120 A 192.0.2.25'] },
  ],
  [
    'CNAME across zones to a missing type: NODATA with the target zone SOA',
    'cross.example.test',
    'AAAA',
    { rcode: 'NOERROR', aa: true, answers: ['cross.example.test 300 CNAME www.other.test.'], authority: [OTHER_SOA] },
  ],
  [
    'CNAME leaving our zones: the CNAME alone',
    'out.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['out.example.test 300 CNAME www.elsewhere.invalid.'] },
  ],
  [
    'CNAME loop terminates',
    'loop1.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['loop1.example.test 300 CNAME loop2.example.test.', 'loop2.example.test 300 CNAME loop1.example.test.'] },
  ],
  ['CNAME to itself terminates', 'self.example.test', 'A', { rcode: 'NOERROR', aa: true, answers: ['self.example.test 300 CNAME self.example.test.'] }],
  [
    'delegation: referral with AA clear, the child NS and glue',
    'host.child.example.test',
    'A',
    {
      rcode: 'NOERROR',
      aa: false,
      authority: ['child.example.test 300 NS ns1.child.example.test.', 'child.example.test 300 NS ns.elsewhere.invalid.'],
      additional: ['ns1.child.example.test 300 A 192.0.2.80'],
    },
  ],
  [
    'NS at the cut is a referral too',
    'child.example.test',
    'NS',
    {
      rcode: 'NOERROR',
      aa: false,
      authority: ['child.example.test 300 NS ns1.child.example.test.', 'child.example.test 300 NS ns.elsewhere.invalid.'],
      additional: ['ns1.child.example.test 300 A 192.0.2.80'],
    },
  ],
  [
    'glue below the cut is not authoritative data: referral',
    'ns1.child.example.test',
    'A',
    {
      rcode: 'NOERROR',
      aa: false,
      authority: ['child.example.test 300 NS ns1.child.example.test.', 'child.example.test 300 NS ns.elsewhere.invalid.'],
      additional: ['ns1.child.example.test 300 A 192.0.2.80'],
    },
  ],
  ['DS at the cut is the parent’s: NODATA, not a referral', 'child.example.test', 'DS', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  [
    'apex NS with glue for in-zone name servers only',
    'example.test',
    'NS',
    {
      rcode: 'NOERROR',
      aa: true,
      answers: ['example.test 300 NS ns1.example.test.', 'example.test 300 NS ns2.example.test.', 'example.test 300 NS ns.elsewhere.invalid.'],
      additional: ['ns1.example.test 300 A 192.0.2.53', 'ns1.example.test 300 AAAA 2001:db8::53', 'ns2.example.test 300 A 192.0.2.54'],
    },
  ],
  [
    'apex SOA',
    'example.test',
    'SOA',
    { rcode: 'NOERROR', aa: true, answers: [`example.test 300 SOA ns1.example.test. hostmaster.example.test. ${SERIAL} 3600 600 604800 60`] },
  ],
  ['ANY over UDP → one synthesised HINFO (RFC 8482)', 'example.test', 'ANY', { rcode: 'NOERROR', aa: true, answers: ['example.test 300 HINFO "RFC8482" ""'] }],
  ['ANY at an empty non-terminal → NODATA', 'sub.example.test', 'ANY', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
  ['ANY at a missing name → NXDOMAIN', 'nothing.example.test', 'ANY', { rcode: 'NXDOMAIN', aa: true, authority: [SOA] }],
  ['negative TTL is min(SOA TTL, SOA MINIMUM): 30 in other.test', 'nothing.other.test', 'A', { rcode: 'NXDOMAIN', aa: true, authority: [OTHER_SOA] }],
  [
    'GSLB record for an unknown client: the default DC, scope of the unknown block',
    'www.example.test',
    'A',
    { rcode: 'NOERROR', aa: true, answers: ['www.example.test 30 A 192.0.2.20'], scope: 1 },
  ],
  ['GSLB name, other type → NODATA, scope 0', 'www.example.test', 'AAAA', { rcode: 'NOERROR', aa: true, authority: [SOA] }],
];

for (const [title, name, type, expected] of table) {
  test(`${title}: ${name} ${type}`, (t) => {
    const client = title.startsWith('GSLB record for an unknown client') ? '192.0.2.0/24' : '10.1.0.0/24';
    t.deepEqual(check(ask(name, type, { client })), expect(expected));
  });
}

test('CNAME to a missing name: the CNAME, then NXDOMAIN with the SOA (RFC 6604 §2)', (t) => {
  t.deepEqual(
    check(ask('dangling.example.test', 'A')),
    expect({ rcode: 'NXDOMAIN', aa: true, answers: ['dangling.example.test 300 CNAME nothing.example.test.'], authority: [SOA] }),
  );
});

test('ANY over TCP → every RRset at the name', (t) => {
  t.deepEqual(show(ask('example.test', 'ANY', { transport: 'tcp' }).answers), [
    `example.test 300 SOA ns1.example.test. hostmaster.example.test. ${SERIAL} 3600 600 604800 60`,
    'example.test 300 NS ns1.example.test.',
    'example.test 300 NS ns2.example.test.',
    'example.test 300 NS ns.elsewhere.invalid.',
    'example.test 300 MX 10 mail.example.test.',
    'example.test 300 TXT "v=spf1 -all"',
  ]);
  t.deepEqual(show(ask('www.example.test', 'ANY', { transport: 'tcp' }).answers), ['www.example.test 30 A 192.0.2.10']);
  t.deepEqual(show(ask('a.wild.example.test', 'ANY', { transport: 'tcp' }).answers), [
    'a.wild.example.test 300 A 192.0.2.70',
    'a.wild.example.test 300 TXT "wildcard"',
  ]);
});

test('names match case-insensitively and owners keep the question’s case', (t) => {
  const a = ask('MaIl.ExAmPlE.TeSt.', 'A');
  t.deepEqual(show(a.answers), ['MaIl.ExAmPlE.TeSt 120 A 192.0.2.25']);
  const w = ask('X.WILD.Example.Test', 'A');
  t.deepEqual(show(w.answers), ['X.WILD.Example.Test 300 A 192.0.2.70']);
  const c = ask('ALIAS.example.TEST', 'A');
  t.deepEqual(show(c.answers), ['ALIAS.example.TEST 300 CNAME www.example.test.', 'www.example.test 30 A 192.0.2.10']);
});

test('only ASCII letters fold (RFC 4343): other bytes compare exactly', (t) => {
  t.is(ask('MAIL.EXAMPLE.TEST', 'A').rcode, RCODE.NOERROR);
  t.is(ask('ma\\195\\140l.example.test', 'A').rcode, RCODE.NXDOMAIN);
});

test('negative answers and static answers carry scope 0; GSLB answers the location scope', (t) => {
  t.is(ask('nothing.example.test', 'A').scope, 0);
  t.is(ask('mail.example.test', 'A').scope, 0);
  t.is(ask('www.example.test', 'A').scope, 16);
  t.deepEqual(ask('www.example.test', 'A').dcs, ['eu']);
});

test('explain collects one trace per GSLB selection on the way', (t) => {
  const explain: ExplainedSelection[] = [];
  ask('alias.example.test', 'A', { explain });
  t.is(explain.length, 1);
  t.like(explain[0], { record: 'www.example.test', type: 'A', scope: 16 });
  t.deepEqual(
    explain[0]!.steps.map((s) => s.stage),
    ['candidates', 'health', 'scope', 'static-proximity', 'pick-dcs', 'balance', 'decision-cache'],
  );
  const none: ExplainedSelection[] = [];
  ask('mail.example.test', 'A', { explain: none });
  t.deepEqual(none, []);
});

test('a dot inside a label (\\. on the wire) is not a label boundary', (t) => {
  // One label "a.wild" under example.test: its closest encloser is the apex, which has no
  // wildcard, so NXDOMAIN — not a synthesis from *.wild.example.test.
  t.deepEqual(check(ask('a\\.wild.example.test', 'A')), expect({ rcode: 'NXDOMAIN', aa: true, authority: [SOA] }));
  // One label "x.example" under test: not in any of our zones.
  t.is(ask('x\\.example.test', 'A').rcode, RCODE.REFUSED);
  // An escaped backslash before a dot leaves the dot a boundary: label "a\" under wild.example.test.
  t.deepEqual(show(ask('a\\\\.wild.example.test', 'A').answers), ['a\\\\.wild.example.test 300 A 192.0.2.70']);
});

test('an answer names the zone of the question and the GSLB records selected for it (for the query counters)', (t) => {
  t.like(ask('mail.example.test', 'A'), { zone: 'example.test', selected: undefined });
  t.like(ask('nothing.example.test', 'A'), { zone: 'example.test', selected: undefined });
  t.is(ask('www.elsewhere.invalid', 'A').zone, undefined);
  // The question's zone, not the zone the CNAME chain ends in; the GSLB record at the end of the chain.
  const chained = ask('back.other.test', 'A');
  t.is(chained.zone, 'other.test');
  const alias = ask('alias.example.test', 'A');
  t.deepEqual(alias.selected && [alias.selected, ...(alias.moreSelected ?? [])].map((r) => `${r.name} ${r.type}`), ['www.example.test A']);
  // One selection: the record itself is the answer's count input, no list is allocated for it.
  t.false(Array.isArray(alias.selected));
  t.is(alias.moreSelected, undefined);
});
