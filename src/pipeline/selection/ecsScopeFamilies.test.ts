import test from 'ava';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { ask, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

/**
 * The ECS scope across address families (RFC 7871 §7.3: a resolver serves an answer to every
 * client inside its scope block, so a scope wider than the block of equal answers gives some
 * clients another's data center). Each record has its own decision cache, so every order runs
 * on a record no query has touched; a query earlier in the order must not change a later one's
 * scope (it did when the cache keyed IPv4 and IPv6 clients alike and an IPv6 client skipped the
 * IPv4 subnets without recording them).
 */

const CONFIG = `
${EXAMPLE_ZONE}
datacenters:
  - { name: us-east, location: NA.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: ap-northeast, location: AS.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.10 }
      - { dc: eu-west, address: 198.51.100.10 }
      - { dc: ap-northeast, address: 203.0.113.10 }
records:
${['a', 'b', 'c']
  .map(
    (n) => `  - name: ${n}.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
        - { when: { clientSubnet: [10.20.30.0/24] }, dcs: [ap-northeast] }
        - { dcs: [us-east] }`,
  )
  .join('\n')}
${['p', 'q']
  .map(
    (n) => `  - name: ${n}.example.test
    type: A
    service: web
    policy: { type: static-proximity, default: [us-east] }`,
  )
  .join('\n')}
`;

/** IPv4 and IPv6 data around the IPv4-mapped block: ::/3 has no location, its IPv4 twin does. */
const geo = prefixLocationDb([
  { cidr: '193.0.0.0/16', location: 'EU.NL', lat: 52.4, lon: 4.9 },
  { cidr: '202.12.0.0/16', location: 'AS.JP', lat: 35.7, lon: 139.7 },
  { cidr: '2001:db8::/32', location: 'EU.NL', lat: 52.4, lon: 4.9 },
]);

type Row = [client: string, answer: string, scope: number];

/** Asks each row in order on `record` of one fresh snapshot and returns what differs from the table. */
function run(record: string, rows: readonly Row[]): string[] {
  const snap = snapshotOf(CONFIG, geo);
  const ctx = fixedContext();
  const wrong: string[] = [];
  for (const [client, answer, scope] of rows) {
    const a = ask(snap, ctx, record, client);
    if (a.data.join() !== answer || a.scope !== scope) wrong.push(`${client}: got ${a.data.join()} /${a.scope}, want ${answer} /${scope}`);
  }
  return wrong;
}

const US = '192.0.2.10';
const AP = '203.0.113.10';
const EU = '198.51.100.10';

test('client subnet rule, IPv6 first: the IPv4 queries after it keep their own scopes', (t) => {
  t.deepEqual(
    run('a.example.test', [
      // Outside 10.20.30.0/24 but reaching ::ffff:0:0/96 only beyond the Teredo border.
      ['2001:db8::/48', US, 21],
      ['10.20.31.0/24', US, 24],
      ['10.0.0.0/8', US, 12],
      ['11.0.0.0/24', US, 8],
      ['10.20.30.0/24', AP, 24],
    ]),
    [],
  );
});

test('client subnet rule, IPv4 first: the IPv6 queries after it stop at the IPv4-carrying blocks', (t) => {
  t.deepEqual(
    run('b.example.test', [
      ['10.20.31.0/24', US, 24],
      ['2001:db9::/48', US, 21],
      // Inside ::/96 (IPv4-compatible), next to the IPv4-mapped block where 10.20.30.0/24 lives.
      ['::1/128', US, 96],
      ['::/64', US, 96],
      ['::5/128', US, 96],
      ['::ffff:10.20.30.0/120', AP, 24],
      ['::ffff:10.20.31.0/120', US, 24],
    ]),
    [],
  );
});

test('the same answers and scopes whatever the order (interleaved families)', (t) => {
  const rows: Row[] = [
    ['10.20.31.0/24', US, 24],
    ['2001:db9::/48', US, 21],
    ['10.0.0.0/8', US, 12],
    ['::1/128', US, 96],
    ['11.0.0.0/24', US, 8],
    ['::/64', US, 96],
    ['10.20.30.0/24', AP, 24],
  ];
  t.deepEqual(run('c.example.test', [...rows].reverse()), []);
  t.deepEqual(run('c.example.test', rows), []);
});

test('location-based answers: an IPv6 block never covers the IPv4-mapped clients answered by their IPv4 location', (t) => {
  // ::/3 has no IPv6 location (default us-east) but ::ffff:193.0.14.0 is in EU.NL: the old scope 3
  // for ::/64 covered it. Now the block stops at ::/96.
  const both = (record: string, order: Row[]): string[] => run(record, order);
  const rows: Row[] = [
    ['::/64', US, 96],
    ['::5/128', US, 96],
    ['::ffff:193.0.14.0/120', EU, 16],
    ['193.0.14.0/24', EU, 16],
    ['2001:db8::/48', EU, 32],
    ['2400::/48', US, 6],
  ];
  t.deepEqual(both('p.example.test', rows), []);
  t.deepEqual(both('q.example.test', [...rows].reverse()), []);
});
