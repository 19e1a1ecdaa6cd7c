import test from 'ava';
import { answer, smallDbs } from './smallDb.js';

// Cases other GSLB engines got wrong. Every assertion runs on the native addon and on the
// TypeScript reference.
const both = (netscaler: string | undefined, custom: unknown[] = []) => {
  const { native, reference } = smallDbs(netscaler, custom);
  return (address: string): string => {
    const a = answer(native, address);
    const b = answer(reference, address);
    if (a !== b) throw new Error(`${address}: native ${a} ≠ TypeScript ${b}`);
    return a;
  };
};

test('an IPv6 client looked up in IPv4-only data does not match', (t) => {
  const look = both('0.0.0.0,255.255.255.255,EU,NL,,,,,4.9,52.4\n');
  t.is(look('10.1.2.3'), 'EU.NL/0');
  t.is(look('2001:db8::1'), 'unknown/0');
  t.is(look('::1'), 'unknown/0');
  t.is(look('::a01:203'), 'unknown/0', 'IPv4-compatible ::10.1.2.3 is IPv6, not IPv4');
});

test('IPv4-mapped IPv6 gives the IPv4 answer', (t) => {
  const look = both('10.0.0.0,10.255.255.255,EU,NL\n10.1.0.0,10.1.255.255,NA,US\n');
  t.is(look('::ffff:10.1.2.3'), look('10.1.2.3'));
  t.is(look('::ffff:10.2.0.1'), 'EU.NL/15');
  t.is(look('::ffff:10.1.0.1'), 'NA.US/16');
});

test('::1 does not match fe80::/32, and a /128 matches only itself', (t) => {
  const look = both(undefined, [
    { cidr: 'fe80::/32', location: 'EU.DE' },
    { cidr: '2001:db8::1/128', location: 'NA.CA' },
  ]);
  t.is(look('::1'), 'unknown/3', '::/3 ends below 2001:db8::1');
  t.is(look('fe80::1'), 'EU.DE/32');
  t.is(look('fe80:1::1'), 'unknown/32');
  t.is(look('2001:db8::1'), 'NA.CA/128');
  t.is(look('2001:db8::2'), 'unknown/127');
  t.is(look('2001:db8::'), 'unknown/128');
});

test('nested prefixes resolve to the most specific regardless of file order', (t) => {
  const lines = ['10.0.0.0,10.255.255.255,EU,NL', '10.1.0.0,10.1.255.255,NA,US', '10.1.2.0,10.1.2.255,AS,JP', '10.1.2.128,10.1.2.128,OC,AU'];
  const forward = both(`${lines.join('\n')}\n`);
  const backward = both(`${[...lines].reverse().join('\n')}\n`);
  for (const [address, expected] of [
    ['10.200.0.1', 'EU.NL/9'],
    ['10.1.200.1', 'NA.US/17'],
    ['10.1.2.1', 'AS.JP/25'],
    ['10.1.2.128', 'OC.AU/32'],
    ['10.1.2.129', 'AS.JP/32'],
    ['10.1.2.130', 'AS.JP/31'],
    ['10.1.3.0', 'NA.US/24'],
  ] as const) {
    t.is(forward(address), expected, address);
    t.is(backward(address), expected, address);
  }
});

test('/0, /32 and /128 entries', (t) => {
  const look = both('0.0.0.0,255.255.255.255,EU,NL\n192.0.2.1,192.0.2.1,NA,US\n', [
    { cidr: '::/0', location: 'AS.JP' },
    { cidr: '2001:db8::/128', location: 'NA.US' },
  ]);
  t.is(look('192.0.2.1'), 'NA.US/32');
  t.is(look('192.0.2.0'), 'EU.NL/32');
  t.is(look('192.0.2.2'), 'EU.NL/31');
  t.is(look('8.8.8.8'), 'EU.NL/1');
  t.is(look('255.255.255.255'), 'EU.NL/3', '192.0.0.0/2 holds the /32 hole');
  t.is(look('0.0.0.0'), 'EU.NL/1');
  t.is(look('2001:db8::'), 'NA.US/128');
  t.is(look('2001:db8::1'), 'AS.JP/128');
  t.is(look('ffff::1'), 'AS.JP/1');
});

test('a custom entry punches its hole and the neighbouring scopes shrink accordingly', (t) => {
  const data = '10.0.0.0,10.255.255.255,EU,NL\n';
  const before = both(data);
  const after = both(data, [{ cidr: '10.1.2.0/24', location: 'NA.US' }]);
  t.is(before('10.1.3.1'), 'EU.NL/8');
  t.is(after('10.1.2.7'), 'NA.US/24');
  t.is(after('10.1.3.1'), 'EU.NL/24');
  t.is(after('10.1.1.1'), 'EU.NL/23');
  t.is(after('10.1.4.1'), 'EU.NL/22');
  t.is(after('10.0.0.1'), 'EU.NL/16');
  t.is(after('10.128.0.1'), 'EU.NL/9');
  // The hole goes through the database's own prefix sizes: a custom /8 replaces a /16 inside it.
  const over = both(`${data}10.1.0.0,10.1.255.255,AS,JP\n`, [{ cidr: '10.0.0.0/8', location: 'NA.US' }]);
  t.is(over('10.1.2.3'), 'NA.US/8');
});

test('overlapping custom entries: the more specific wins, in any order', (t) => {
  const entries = [
    { cidr: '10.0.0.0/8', location: 'EU.NL' },
    { from: '10.1.0.0', to: '10.1.0.255', location: 'NA.US' },
    { cidr: '10.1.0.128/25', location: 'AS.JP' },
  ];
  for (const custom of [entries, [...entries].reverse()]) {
    const look = both('0.0.0.0,255.255.255.255,OC,AU\n', custom);
    t.is(look('10.1.0.1'), 'NA.US/25');
    t.is(look('10.1.0.200'), 'AS.JP/25');
    t.is(look('10.2.0.1'), 'EU.NL/15');
    t.is(look('11.0.0.1'), 'OC.AU/8');
  }
  // Equal ranges are a configuration error naming both (`src/pipeline/duplicates.test.ts`): which would win is a guess.
  t.throws(() =>
    both(undefined, [
      { cidr: '192.0.2.0/24', location: 'EU.NL' },
      { from: '192.0.2.0', to: '192.0.2.255', location: 'NA.US' },
    ]),
  );
});

test('a custom entry with the same location as the data merges with it (scope widens)', (t) => {
  const look = both('10.0.0.0,10.0.255.255,EU,NL\n10.1.0.0,10.1.255.255,NA,US\n', [{ cidr: '10.1.0.0/16', location: 'EU.NL' }]);
  t.is(look('10.1.0.1'), 'EU.NL/15');
});
