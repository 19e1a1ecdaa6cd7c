import test from 'ava';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { prefixLocationDb, type PrefixEntry } from '../../../test/support/prefixLocationDb.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

/**
 * ECS scope tables in the style of gdnsd's t/013clientsub: exact answer and exact scope for each
 * client, with the location map 10.0.0.0/8 -> a, 10.20.0.0/16 -> b, 10.20.30.0/24 -> c,
 * 2001:db8::/32 -> a, everything else -> d (issue 6; docs/PRODUCT.md §8).
 */
const TABLE: [client: string, answer: string, scope: number][] = [
  ['10.20.30.5/32', '192.0.2.3', 24],
  // 10.20.0.0/18 is all b; /16 would leak b to 10.20.30.0/24, whose answer is c.
  ['10.20.99.0/24', '192.0.2.2', 18],
  // Longer than the source prefix (RFC 7871 §7.2.1): 10.20.0.0/20 is the largest block without c.
  ['10.20.0.0/16', '192.0.2.2', 20],
  ['10.99.0.0/24', '192.0.2.1', 10],
  ['11.0.0.0/24', '192.0.2.4', 8],
  ['2001:db8::/48', '192.0.2.1', 32],
  // IPv4-mapped IPv6 behaves as IPv4 (the front door adds 96 to the scope on the wire).
  ['::ffff:10.20.30.5/128', '192.0.2.3', 24],
];

const ZONE = `
${EXAMPLE_ZONE}
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1 }
      - { dc: b, address: 192.0.2.2 }
      - { dc: c, address: 192.0.2.3 }
      - { dc: d, address: 192.0.2.4 }
`;

const LOCATION_ENTRIES: PrefixEntry[] = [
  { cidr: '10.0.0.0/8', location: 'Asia.IN' },
  { cidr: '10.20.0.0/16', location: 'Europe.GB' },
  { cidr: '10.20.30.0/24', location: 'NorthAmerica.US' },
  { cidr: '2001:db8::/32', location: 'Asia.IN' },
];

const PROXIMITY = `${ZONE}
datacenters:
  - { name: a, location: Asia.IN }
  - { name: b, location: Europe.UK }
  - { name: c, location: NorthAmerica.US }
  - { name: d, location: Oceania.AU }
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: static-proximity, default: [d] }
`;

const RULES = [
  '{ when: { clientSubnet: [10.0.0.0/8, "2001:db8::/32"] }, dcs: [a] }',
  '{ when: { clientSubnet: [10.20.0.0/16] }, dcs: [b] }',
  '{ when: { clientSubnet: [10.20.30.0/24] }, dcs: [c] }',
];

function staticConfig(rules: string[], overlap: string): string {
  return `${ZONE}
datacenters: [{ name: a }, { name: b }, { name: c }, { name: d }]
records:
  - name: www.example.test
    type: A
    service: web
    policy:
      type: static
      subnetOverlap: ${overlap}
      rules:
${[...rules, '{ dcs: [d] }'].map((r) => `        - ${r}`).join('\n')}
`;
}

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

function table(snapYaml: string, entries: PrefixEntry[]): [string, string, number][] {
  const snap = snapshotOf(snapYaml, prefixLocationDb(entries));
  return TABLE.map(([client]) => {
    const a = ask(snap, fixedContext(), 'www.example.test', client);
    return [client, a.data.join(' '), a.scope];
  });
}

test('scope table: static proximity over a location map, every order of the entries', (t) => {
  for (const order of permutations(LOCATION_ENTRIES)) t.deepEqual(table(PROXIMITY, order), TABLE, order.map((e) => e.cidr).join(' '));
});

test('scope table: static rules with most-specific, every order of the rules', (t) => {
  for (const order of permutations(RULES)) t.deepEqual(table(staticConfig(order, 'most-specific'), []), TABLE, order.join(' | '));
});

test('static rules with "first": order decides, and the scope covers every subnet that was read', (t) => {
  const broadFirst = table(staticConfig(RULES, 'first'), []);
  t.deepEqual(broadFirst.slice(0, 4), [
    ['10.20.30.5/32', '192.0.2.1', 8],
    ['10.20.99.0/24', '192.0.2.1', 8],
    ['10.20.0.0/16', '192.0.2.1', 8],
    ['10.99.0.0/24', '192.0.2.1', 8],
  ]);
  t.deepEqual(table(staticConfig([...RULES].reverse(), 'first'), []), TABLE);
});

const OVERLAP = (overlap: string | undefined, order: string[]) => `${ZONE}
datacenters: [{ name: a }, { name: b }, { name: c }, { name: d }]
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, default: [d] } }
actions:
  - { name: to-a, type: view, dcs: [a] }
  - { name: to-b, type: view, dcs: [b] }
policies:
${overlap ? `  subnetOverlap: ${overlap}\n` : ''}  rules:
${order.map((r) => `    - ${r}`).join('\n')}
`;
const P8 = '{ name: net8, when: { clientSubnet: [10.0.0.0/8] }, action: to-a }';
const P16 = '{ name: net16, when: { clientSubnet: [10.20.0.0/16] }, action: to-b }';

test('overlapping policy subnets: most-specific picks 10.20.0.0/16 in either order; first picks by order', (t) => {
  const answer = (overlap: string, order: string[], client: string): [string, number] => {
    const a = ask(snapshotOf(OVERLAP(overlap, order)), fixedContext(), 'www.example.test', client);
    return [a.dcs.join(), a.scope];
  };
  t.deepEqual(answer('most-specific', [P8, P16], '10.20.1.1'), ['b', 16]);
  t.deepEqual(answer('most-specific', [P16, P8], '10.20.1.1'), ['b', 16]);
  t.deepEqual(answer('most-specific', [P8, P16], '10.21.1.1'), ['a', 16]);
  t.deepEqual(answer('first', [P8, P16], '10.20.1.1'), ['a', 8]);
  t.deepEqual(answer('first', [P16, P8], '10.20.1.1'), ['b', 16]);
  t.deepEqual(answer('first', [P16, P8], '10.21.1.1'), ['a', 16]);
  // Outside both: the record's own ranking (unknown location -> default d); the scope still
  // covers both subnets (10.0.0.0/8 excludes 11.0.0.0/8 at /8).
  t.deepEqual(answer('first', [P16, P8], '11.1.1.1'), ['d', 8]);
});

test('overlapping policy subnets without subnetOverlap are a configuration error naming both', (t) => {
  const e = t.throws(() => parseConfigText(OVERLAP(undefined, [P8, P16])), { instanceOf: ConfigError });
  t.deepEqual(
    e?.problems.map(({ path, message }) => ({ path, message })),
    [
      {
        path: 'policies.subnetOverlap',
        message:
          'is required: rule "net8" (10.0.0.0/8) and rule "net16" (10.20.0.0/16) overlap; say "first" (order decides) or "most-specific" (the longest matching subnet decides)',
      },
    ],
  );
});

test('a view (internal 10.0.0.0/8 sees another address) carries a scope of 8 or more, never 0', (t) => {
  const cfg = `${ZONE}
datacenters: [{ name: a }, { name: b }, { name: c }, { name: d }]
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, default: [d] } }
actions:
  - { name: internal, type: view, dcs: [a] }
policies:
  rules:
    - { name: internal-clients, when: { clientSubnet: [10.0.0.0/8] }, action: internal }
`;
  const snap = snapshotOf(cfg);
  const rows = ['10.1.2.3', '10.200.0.0/16', '11.1.1.1', '192.0.2.1', '::ffff:10.9.9.9'].map((c) => {
    const a = ask(snap, fixedContext(), 'www.example.test', c);
    return [c, a.data.join(' '), a.scope];
  });
  t.deepEqual(rows, [
    ['10.1.2.3', '192.0.2.1', 8],
    ['10.200.0.0/16', '192.0.2.1', 8],
    ['11.1.1.1', '192.0.2.4', 8],
    // 128.0.0.0/1 holds no internal address: the largest block around 192.0.2.1 with the same answer.
    ['192.0.2.1', '192.0.2.4', 1],
    ['::ffff:10.9.9.9', '192.0.2.1', 8],
  ]);
});

test('a view whose data centers are down does not make the name vanish for its clients (fail-closed record)', (t) => {
  const cfg = `${ZONE}
datacenters: [{ name: a }, { name: b }, { name: c }, { name: d }]
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: static-proximity, default: [d] }
    health: { allDown: fail-closed }
actions:
  - { name: internal, type: view, dcs: [a] }
policies:
  rules:
    - { name: internal-clients, when: { clientSubnet: [10.0.0.0/8] }, action: internal }
`;
  const at = (client: string, down: string[]): [string, number] => {
    const a = ask(snapshotOf(cfg, undefined, dcsDown(...down)), fixedContext(), 'www.example.test', client);
    return [a.data.join(' '), a.scope];
  };
  t.deepEqual(at('10.1.2.3', []), ['192.0.2.1', 8]);
  t.deepEqual(at('10.1.2.3', ['a']), ['192.0.2.4', 8], 'the view does not apply: the record ranks as for everyone');
  t.deepEqual(at('11.1.2.3', ['a']), ['192.0.2.4', 8]);
  t.deepEqual(at('10.1.2.3', ['a', 'b', 'c', 'd']), ['', 0], 'all down: NODATA (scope 0) for every client alike');
  t.deepEqual(at('11.1.2.3', ['a', 'b', 'c', 'd']), ['', 0]);
});
