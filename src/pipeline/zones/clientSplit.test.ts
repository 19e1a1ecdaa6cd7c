import test from 'ava';
import { clientOf, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { replaceOnce } from '../../../test/support/replaceOnce.js';
import { ConfigError } from '../../core/config/load.js';
import { presentData } from '../../core/dns/presentation.js';
import { RCODE } from '../../core/dns/rcode.js';
import type { Answer } from '../../core/model/query.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { resolve } from './authoritative.js';
import { nameRrsets } from './nameRrsets.js';

/**
 * A name that answers an address to some clients and a CNAME to others (issue 17, item 11):
 * `clients` splits it (`../config/clientsSchema.ts`); for each query exactly one side answers,
 * with the ECS scope of the boundary between the sides; load rejects every configuration in which
 * one client could get both, and `clients` anywhere else.
 *
 * Names: `v4`: GSLB A for 10.20.30.0/24, a static CNAME for everyone else; `alias`: a static CNAME
 * for 10.20.30.0/24 and 2001:db8:30::/48, a GSLB A and a static AAAA for everyone else; `both`: a
 * GSLB CNAME for 10.0.0.0/8 and a static A for 192.0.2.0/24 (clients in neither get NODATA).
 * No record reads the client otherwise (static policies without conditions), so every scope
 * below comes from the split alone.
 */

const CONFIG = `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: target, type: A, data: 192.0.2.99 }
      - { name: v4, type: CNAME, data: target.example.test }
      - { name: alias, type: CNAME, data: target.example.test, clients: [10.20.30.0/24, "2001:db8:30::/48"] }
      - { name: alias, type: AAAA, data: "2001:db8::10" }
      - { name: both, type: A, data: 192.0.2.77, clients: [192.0.2.0/24] }
datacenters:
  - { name: dc1, location: EU.NL, lat: 52.4, lon: 4.9 }
services:
  - name: web
    endpoints:
      - { dc: dc1, address: 192.0.2.10 }
      - { dc: dc1, target: target.example.test }
records:
  - { name: v4.example.test, type: A, ttl: 30, service: web, policy: { type: static, rules: [ { dcs: [dc1] } ] }, clients: [10.20.30.0/24] }
  - { name: alias.example.test, type: A, ttl: 30, service: web, policy: { type: static, rules: [ { dcs: [dc1] } ] } }
  - { name: both.example.test, type: CNAME, ttl: 30, service: web, policy: { type: static, rules: [ { dcs: [dc1] } ] }, clients: [10.0.0.0/8] }
`;

const snap = snapshotOf(CONFIG);
const CODES: Record<string, number> = { A: 1, CNAME: 5, AAAA: 28, ANY: 255 };
const SOA = /^example\.test 60 SOA /;

/** The answer for `client` as `rcode answers… /scope` (NODATA: `NODATA /scope`). */
function ask(name: string, type: string, client: string, transport: 'udp' | 'tcp' = 'udp'): string {
  const a: Answer = resolve({ name, type: CODES[type]!, client: clientOf(client), transport }, snap, fixedContext());
  const rcode = Object.entries(RCODE).find(([, v]) => v === a.rcode)![0];
  const lines = a.answers.map((r) => `${r.name} ${r.type} ${presentData(r.type, r.data)}`);
  if (lines.length === 0 && a.authority.some((r) => SOA.test(`${r.name} ${r.ttl} ${r.type} ${presentData(r.type, r.data)}`))) lines.push('NODATA');
  return `${rcode} ${lines.join(' | ')} /${a.scope} reuse ${a.reuseScope}`;
}

const CNAME_V4 = 'v4.example.test CNAME target.example.test. | target.example.test A 192.0.2.99';
const CNAME_ALIAS = 'alias.example.test CNAME target.example.test. | target.example.test A 192.0.2.99';

const table: [title: string, name: string, type: string, client: string, expected: string][] = [
  // v4: the address side names its clients; the CNAME answers the rest.
  ['inside the A side', 'v4.example.test', 'A', '10.20.30.0/24', 'NOERROR v4.example.test A 192.0.2.10 /24 reuse 24'],
  ['inside the A side, a longer source', 'v4.example.test', 'A', '10.20.30.128/25', 'NOERROR v4.example.test A 192.0.2.10 /24 reuse 24'],
  ['the neighbouring /24: CNAME, scope up to the boundary', 'v4.example.test', 'A', '10.20.31.0/24', `NOERROR ${CNAME_V4} /24 reuse 24`],
  ['10.0.0.0/8: CNAME, /12', 'v4.example.test', 'A', '10.0.0.0/8', `NOERROR ${CNAME_V4} /12 reuse 12`],
  ['11.0.0.0/24: CNAME, /8', 'v4.example.test', 'A', '11.0.0.0/24', `NOERROR ${CNAME_V4} /8 reuse 8`],
  ['IPv6 client: CNAME, clear of the IPv4-carrying ranges', 'v4.example.test', 'A', '2001:db8::/48', `NOERROR ${CNAME_V4} /21 reuse 21`],
  [
    'IPv4-mapped member (folded to IPv4: the scope in IPv4 bits)',
    'v4.example.test',
    'A',
    '::ffff:10.20.30.0/120',
    'NOERROR v4.example.test A 192.0.2.10 /24 reuse 24',
  ],
  ['AAAA inside the A side: NODATA with the scope', 'v4.example.test', 'AAAA', '10.20.30.0/24', 'NOERROR NODATA /24 reuse 24'],
  ['CNAME asked inside the A side: NODATA', 'v4.example.test', 'CNAME', '10.20.30.0/24', 'NOERROR NODATA /24 reuse 24'],
  ['CNAME asked outside: the CNAME alone', 'v4.example.test', 'CNAME', '10.20.31.0/24', 'NOERROR v4.example.test CNAME target.example.test. /24 reuse 24'],
  ['ANY over TCP inside: only the address side', 'v4.example.test', 'ANY', '10.20.30.0/24', 'NOERROR v4.example.test A 192.0.2.10 /24 reuse 24'],
  // alias: the CNAME names its clients (IPv4 and IPv6); the GSLB A and static AAAA answer the rest.
  ['inside the CNAME side (IPv4)', 'alias.example.test', 'A', '10.20.30.0/24', `NOERROR ${CNAME_ALIAS} /24 reuse 24`],
  ['inside the CNAME side (IPv6)', 'alias.example.test', 'A', '2001:db8:30::/56', `NOERROR ${CNAME_ALIAS} /48 reuse 48`],
  ['outside: the A', 'alias.example.test', 'A', '10.20.31.0/24', 'NOERROR alias.example.test A 192.0.2.10 /24 reuse 24'],
  ['outside (IPv6 neighbour): the static AAAA', 'alias.example.test', 'AAAA', '2001:db8:31::/48', 'NOERROR alias.example.test AAAA 2001:db8::10 /48 reuse 48'],
  ['outside (IPv6, far): the AAAA, /31', 'alias.example.test', 'AAAA', '2001:dba::/48', 'NOERROR alias.example.test AAAA 2001:db8::10 /31 reuse 31'],
  // both: each side names its clients; a client in neither gets NODATA for the block between them.
  [
    'the CNAME side',
    'both.example.test',
    'A',
    '10.1.0.0/16',
    'NOERROR both.example.test CNAME target.example.test. | target.example.test A 192.0.2.99 /8 reuse 8',
  ],
  ['the A side', 'both.example.test', 'A', '192.0.2.0/24', 'NOERROR both.example.test A 192.0.2.77 /24 reuse 24'],
  ['neither side: NODATA, scoped', 'both.example.test', 'A', '192.0.3.0/24', 'NOERROR NODATA /24 reuse 24'],
];

for (const [title, name, type, client, expected] of table) {
  test(`answer: ${title}`, (t) => {
    t.is(ask(name, type, client, type === 'ANY' ? 'tcp' : 'udp'), expected);
  });
}

test('nameRrsets (PowerDNS): one side per client, every RRset with the scope of the split', (t) => {
  const show = (client: string): string[] =>
    nameRrsets(snap, 'alias.example.test', clientOf(client), fixedContext())!.rrsets.map(
      (r) => `${r.type} ${r.records.map((x) => presentData(x.type, x.data)).join(',')} /${r.scope}`,
    );
  t.deepEqual(show('10.20.30.0/24'), ['CNAME target.example.test. /24']);
  t.deepEqual(show('10.20.31.0/24'), ['AAAA 2001:db8::10 /24', 'A 192.0.2.10 /24']);
  t.true(nameRrsets(snap, 'alias.example.test', clientOf('10.20.31.0/24'), fixedContext())!.dynamic);
});

/** The load problems of CONFIG edited, as `path: message`. */
function problems(from: string, to: string): string[] {
  try {
    parseConfigText(replaceOnce(CONFIG, from, to), 'gslbd.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message.replace(/ \(first defined at .*\)$/, '')}`);
    throw e;
  }
  return [];
}

test('the split configuration loads', (t) => {
  t.deepEqual(problems('ns1, type: A', 'ns1, type: A'), []);
});

const V4_A = 'clients: [10.20.30.0/24] }';
const rejected: [title: string, from: string, to: string, expected: string][] = [
  [
    'both sides name clients and they overlap (GSLB A inside a static CNAME, IPv4)',
    '{ name: v4, type: CNAME, data: target.example.test }',
    '{ name: v4, type: CNAME, data: target.example.test, clients: [10.0.0.0/8] }',
    'records[0].type: clients in 10.20.30.0/24 would get both the CNAME and the A records of "v4.example.test": the clients of a CNAME and of the addresses at one name must not overlap',
  ],
  [
    'overlap, IPv6, static CNAME and static AAAA',
    '{ name: alias, type: AAAA, data: "2001:db8::10" }',
    '{ name: alias, type: AAAA, data: "2001:db8::10", clients: ["2001:db8::/32"] }',
    'zones[0].records[4]: clients in 2001:db8:30::/48 would get both the CNAME and the AAAA records of "alias.example.test": the clients of a CNAME and of the addresses at one name must not overlap',
  ],
  [
    'overlap, GSLB CNAME and static A (IPv4-mapped written)',
    'clients: [192.0.2.0/24] }',
    'clients: ["::ffff:10.1.2.0/120"] }',
    'records[2].type: clients in 10.1.2.0/24 would get both the CNAME and the A records of "both.example.test": the clients of a CNAME and of the addresses at one name must not overlap',
  ],
  [
    'neither side names clients (as before item 11)',
    `, ${V4_A}`,
    ' }',
    'records[0].type: "v4.example.test" already has a CNAME; no other record may share its name',
  ],
  [
    'clients at a name with no CNAME',
    '{ name: target, type: A, data: 192.0.2.99 }',
    '{ name: target, type: A, data: 192.0.2.99, clients: [10.0.0.0/8] }',
    'zones[0].records[1].clients: `clients` applies only at a name that holds a CNAME and address records (A, AAAA); "target.example.test" A answers every client',
  ],
  [
    'a CNAME beside a type other than A and AAAA',
    '{ name: alias, type: AAAA, data: "2001:db8::10" }',
    '{ name: alias, type: TXT, data: "x" }',
    'zones[0].records[4]: "alias.example.test" already has a CNAME; no other record may share its name',
  ],
  [
    'one RRset with two client sets',
    '{ name: both, type: A, data: 192.0.2.77, clients: [192.0.2.0/24] }',
    '{ name: both, type: A, data: 192.0.2.77, clients: [192.0.2.0/24] }\n      - { name: both, type: A, data: 192.0.2.78, clients: [192.0.3.0/24] }',
    'zones[0].records[6]: every A record of "both.example.test" must name the same clients: one RRset answers one set of clients',
  ],
];

for (const [title, from, to, expected] of rejected) {
  test(`load rejects: ${title}`, (t) => {
    t.deepEqual(problems(from, to), [expected]);
  });
}
