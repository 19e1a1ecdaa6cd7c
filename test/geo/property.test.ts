import test from 'ava';
import fc from 'fast-check';
import { formatIp, ipv4, ipv6, parseIp, type IpAddress } from '../../src/core/net/ipAddress.js';
import type { LocationDb } from '../../src/core/location/locationDb.js';
import { unpackId, unpackPrefix } from '../../src/core/lpm/rangeTable.js';
import { smallDbs } from './smallDb.js';

// Random prefix sets with nesting and holes, built through the real loaders (a NetScaler file
// in random order for the database, `geo.custom` entries on top) and checked against a naive
// oracle that shares no code with them: the location of an address is that of the most specific
// custom prefix containing it, else of the most specific database prefix (later wins ties), and
// the scope is the shortest prefix whose whole block has that same location, found by trying
// every length against every boundary.

interface Prefix {
  readonly start: bigint;
  readonly end: bigint;
  readonly loc: number;
  readonly custom: boolean;
}

const LOCATIONS = 4;

function prefixArb(bits: 32 | 128, region: bigint, regionBits: number): fc.Arbitrary<Prefix> {
  return fc
    .record({
      len: fc.integer({ min: 0, max: bits }),
      inRegion: fc.integer({ min: 0, max: 9 }),
      low: fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n }),
      loc: fc.integer({ min: 1, max: LOCATIONS }),
      custom: fc.boolean(),
    })
    .map(({ len, inRegion, low, loc, custom }) => {
      // Nine in ten prefixes fall inside one region, so they nest and overlap.
      const regionMask = (1n << BigInt(bits - regionBits)) - 1n;
      const addr = inRegion > 0 ? region | (low & regionMask) : low;
      const host = (1n << BigInt(bits - len)) - 1n;
      const start = addr & ~host & ((1n << BigInt(bits)) - 1n);
      return { start, end: start | host, loc, custom };
    });
}

function oracleLabel(prefixes: readonly Prefix[], x: bigint): number {
  let best: Prefix | undefined;
  for (const custom of [true, false]) {
    for (const p of prefixes) {
      if (p.custom !== custom || x < p.start || x > p.end) continue;
      if (!best || p.end - p.start <= best.end - best.start) best = p;
    }
    if (best) return best.loc;
  }
  return 0;
}

function oracleScope(prefixes: readonly Prefix[], bits: number, x: bigint): number {
  const label = oracleLabel(prefixes, x);
  const boundaries = new Set<bigint>();
  for (const p of prefixes) boundaries.add(p.start).add(p.end + 1n);
  for (let len = 0; len <= bits; len++) {
    const host = (1n << BigInt(bits - len)) - 1n;
    const lo = x & ~host;
    const hi = lo | host;
    let uniform = oracleLabel(prefixes, lo) === label;
    for (const b of boundaries) if (uniform && b > lo && b <= hi && oracleLabel(prefixes, b) !== label) uniform = false;
    if (uniform) return len;
  }
  return bits;
}

function toAddress(bits: 32 | 128, v: bigint): IpAddress {
  if (bits === 32) return ipv4(Number(v));
  const w = (i: number): number => Number((v >> BigInt(96 - 32 * i)) & 0xffffffffn);
  return ipv6(w(0), w(1), w(2), w(3));
}

function check(bits: 32 | 128, generated: readonly Prefix[], extra: readonly bigint[]): void {
  // The same custom range twice is a configuration error: the later of two equal ones stays (the oracle's tie rule).
  const prefixes = generated.filter((p, i) => !p.custom || !generated.slice(i + 1).some((q) => q.custom && q.start === p.start && q.end === p.end));
  const text = (v: bigint): string => formatIp(toAddress(bits, v));
  const netscaler = prefixes
    .filter((p) => !p.custom)
    .map((p) => `${text(p.start)},${text(p.end)},EU,NL,R${p.loc}`)
    .join('\n');
  const custom = prefixes.filter((p) => p.custom).map((p) => ({ from: text(p.start), to: text(p.end), location: `EU.NL.R${p.loc}` }));
  const { native, reference } = smallDbs(`${netscaler}\n`, custom);
  const max = (1n << BigInt(bits)) - 1n;
  const probes = new Set<bigint>([0n, max, ...extra]);
  for (const p of prefixes) for (const v of [p.start - 1n, p.start, p.end, p.end + 1n]) if (v >= 0n && v <= max) probes.add(v);
  for (const x of probes) {
    const expected = `R${oracleLabel(prefixes, x)}/${oracleScope(prefixes, bits, x)}`;
    for (const db of [native, reference] as LocationDb[]) {
      const a = toAddress(bits, x);
      const packed = db.lookup(a);
      const id = unpackId(packed);
      const got = `${id === 0 ? 'R0' : db.location(id).qualifiers[2]}/${unpackPrefix(packed)}`;
      if (got !== expected) throw new Error(`${db.implementation} ${formatIp(a)}: got ${got}, oracle ${expected}`);
    }
  }
}

test('IPv4: random nested prefix sets and custom holes match the naive oracle', (t) => {
  const region = BigInt(parseIp('10.0.0.0').w0);
  fc.assert(
    fc.property(
      fc.array(prefixArb(32, region, 8), { minLength: 1, maxLength: 12 }),
      fc.array(fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }), { maxLength: 8 }),
      (prefixes, extra) => {
        check(32, prefixes, extra);
      },
    ),
    { numRuns: 100, seed: 42 },
  );
  t.pass();
});

test('IPv6: random nested prefix sets and custom holes match the naive oracle', (t) => {
  const a = parseIp('2001:db8::');
  const region = (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n);
  fc.assert(
    fc.property(
      fc.array(prefixArb(128, region, 32), { minLength: 1, maxLength: 10 }),
      fc.array(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), { maxLength: 8 }),
      (prefixes, extra) => {
        check(128, prefixes, extra);
      },
    ),
    { numRuns: 60, seed: 43 },
  );
  t.pass();
});
