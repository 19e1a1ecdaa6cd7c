import test from 'ava';
import fc from 'fast-check';
import { parseIp } from '../net/ipAddress.js';
import { narrowIds, RangeBuilder4, RangeBuilder6, RangeTable4, RangeTable6, unpackId, unpackPrefix } from './rangeTable.js';

/**
 * Longest-prefix tables: exact id + prefix for hand-made tilings (issue 6's scope cases), and a
 * property test against a brute-force oracle. The prefix a lookup returns is the length of the
 * largest aligned block around the address in which the (merged) location id is constant.
 */

const v4 = (text: string): number => parseIp(text).w0;
const v6 = (text: string): [number, number, number, number] => {
  const a = parseIp(text);
  return [a.w0, a.w1, a.w2, a.w3];
};
const look4 = (t: RangeTable4, addr: string): [number, number] => {
  const p = t.lookup(v4(addr));
  return [unpackId(p), unpackPrefix(p)];
};

const A = 1;
const B = 2;
const C = 3;
const D = 4;

/**
 * The nested map 10.0.0.0/8 → a, 10.20.0.0/16 → b, 10.20.30.0/24 → c, else d, written as the
 * ascending, non-overlapping tiling the builder takes.
 */
function nestedMap4(): RangeTable4 {
  const b = new RangeBuilder4();
  b.add(v4('0.0.0.0'), v4('9.255.255.255'), D);
  b.add(v4('10.0.0.0'), v4('10.19.255.255'), A);
  b.add(v4('10.20.0.0'), v4('10.20.29.255'), B);
  b.add(v4('10.20.30.0'), v4('10.20.30.255'), C);
  b.add(v4('10.20.31.0'), v4('10.20.255.255'), B);
  b.add(v4('10.21.0.0'), v4('10.255.255.255'), A);
  b.add(v4('11.0.0.0'), v4('255.255.255.255'), D);
  return b.build();
}

// query → id, prefix (issue 6, "Tests": the scope each answer must carry).
const nestedCases: [address: string, id: number, prefix: number][] = [
  ['10.20.30.5', C, 24],
  ['10.20.99.0', B, 18], // 10.20.64.0/18 is all b; a /16 would include c
  ['10.20.0.0', B, 20], // 10.20.0.0/20 is all b: longer than the database's /16
  ['10.20.16.0', B, 21], // 10.20.16.0/21: the next /21 (24–31) holds c
  ['10.20.31.0', B, 24], // 10.20.31.0/24 sits beside c's /24
  ['10.99.0.0', A, 10], // 10.64.0.0/10
  ['10.0.0.0', A, 12], // 10.0.0.0/12 (10.16/12 holds b)
  ['11.0.0.0', D, 8],
  ['9.1.2.3', D, 7], // 8.0.0.0/7
  ['0.0.0.0', D, 5], // 0.0.0.0/5 (8.0.0.0/5 reaches into 10/8)
  ['255.255.255.255', D, 1], // 128.0.0.0/1
];
for (const [address, id, prefix] of nestedCases) {
  test(`nested map: ${address} → id ${id}, /${prefix}`, (t) => {
    t.deepEqual(look4(nestedMap4(), address), [id, prefix]);
  });
}

test('nested map IPv6: 2001:db8::/32 → a, else d', (t) => {
  const b = new RangeBuilder6();
  b.add(v6('::'), v6('2001:db7:ffff:ffff:ffff:ffff:ffff:ffff'), D);
  b.add(v6('2001:db8::'), v6('2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'), A);
  b.add(v6('2001:db9::'), v6('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), D);
  const table = b.build();
  const look = (text: string): [number, number] => {
    const p = table.lookup(...v6(text));
    return [unpackId(p), unpackPrefix(p)];
  };
  t.deepEqual(look('2001:db8::'), [A, 32]);
  t.deepEqual(look('2001:db8:1234::1'), [A, 32]);
  t.deepEqual(look('2001:db9::'), [D, 32]);
  t.deepEqual(look('2001:dba::'), [D, 31]);
  t.deepEqual(look('::1'), [D, 3]);
  t.deepEqual(look('ffff::'), [D, 1]);
  t.is(table.size, 3);
});

test('equal neighbours merge and gaps become id 0', (t) => {
  const b = new RangeBuilder4();
  b.add(v4('10.0.0.0'), v4('10.0.0.255'), A);
  b.add(v4('10.0.1.0'), v4('10.0.1.255'), A);
  b.add(v4('10.0.3.0'), v4('10.0.3.255'), B);
  const table = b.build();
  t.deepEqual([...table.starts], [0, v4('10.0.0.0'), v4('10.0.2.0'), v4('10.0.3.0'), v4('10.0.4.0')]);
  t.deepEqual([...table.ids], [0, A, 0, B, 0]);
  t.deepEqual(look4(table, '10.0.0.7'), [A, 23]);
  t.deepEqual(look4(table, '10.0.2.9'), [0, 24]);
});

test('an empty builder is one unknown range: prefix 0 everywhere', (t) => {
  const table = new RangeBuilder4().build();
  t.is(table.size, 1);
  t.deepEqual(look4(table, '0.0.0.0'), [0, 0]);
  t.deepEqual(look4(table, '255.255.255.255'), [0, 0]);
  const t6 = new RangeBuilder6().build();
  t.is(t6.lookup(0xffffffff, 0, 0, 1), 0);
});

test('a range that ends at the last address leaves no trailing gap', (t) => {
  const b = new RangeBuilder4();
  b.add(v4('128.0.0.0'), v4('255.255.255.255'), A);
  const table = b.build();
  t.deepEqual([...table.ids], [0, A]);
  t.deepEqual(look4(table, '200.1.1.1'), [A, 1]);
  t.deepEqual(look4(table, '1.1.1.1'), [0, 1]);
});

test('host ranges give /32 and /128', (t) => {
  const b = new RangeBuilder4();
  b.add(v4('192.0.2.1'), v4('192.0.2.1'), A);
  t.deepEqual(look4(b.build(), '192.0.2.1'), [A, 32]);
  const b6 = new RangeBuilder6();
  b6.add(v6('2001:db8::1'), v6('2001:db8::1'), A);
  const p = b6.build().lookup(...v6('2001:db8::1'));
  t.deepEqual([unpackId(p), unpackPrefix(p)], [A, 128]);
});

test('builders reject overlapping or out-of-order ranges', (t) => {
  const b = new RangeBuilder4();
  b.add(v4('10.0.0.0'), v4('10.0.0.255'), A);
  t.throws(() => b.add(v4('10.0.0.128'), v4('10.0.1.255'), B), { message: /overlaps or is out of order/ });
  t.throws(() => b.add(v4('9.0.0.0'), v4('9.0.0.255'), B), { message: /overlaps or is out of order/ });
  const b6 = new RangeBuilder6();
  b6.add(v6('2001:db8::'), v6('2001:db8::ff'), A);
  t.throws(() => b6.add(v6('2001:db8::10'), v6('2001:db8::1ff'), B), { message: 'IPv6 range overlaps or is out of order' });
  b6.add(v6('ffff::'), v6('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), B);
  t.throws(() => b6.add(v6('ffff::'), v6('ffff::1'), A), { message: 'IPv6 range overlaps or is out of order' });
});

test('narrowIds keeps ids in the narrowest array that holds them: 1 byte up to 256 values, 2 up to 65,536, else 4', (t) => {
  const ids = Uint32Array.of(0, 255, 7);
  t.deepEqual(narrowIds(ids, 256), Uint8Array.of(0, 255, 7));
  t.deepEqual(narrowIds(Uint32Array.of(0, 65535), 65536), Uint16Array.of(0, 65535));
  t.is(narrowIds(ids, 65537), ids);
});

test('unpackId and unpackPrefix split id * 256 + prefix', (t) => {
  t.deepEqual([unpackId(123456 * 256 + 17), unpackPrefix(123456 * 256 + 17)], [123456, 17]);
  t.deepEqual([unpackId(0xffffff * 256 + 128), unpackPrefix(0xffffff * 256 + 128)], [0xffffff, 128]);
});

// ---------------------------------------------------------------------------------------------
// Property: lookup equals a brute-force oracle over random tilings.

/** A tiling as inclusive ranges covering the whole space, with ids (equal neighbours allowed). */
interface Tiling {
  readonly starts: bigint[];
  readonly ids: number[];
  readonly bits: 32 | 128;
}

function tilingFrom(boundaries: bigint[], ids: number[], bits: 32 | 128): Tiling {
  const starts = [0n, ...[...new Set(boundaries.filter((b) => b > 0n))].sort((a, b) => (a < b ? -1 : 1))];
  return { starts, ids: starts.map((_, i) => ids[i % ids.length]!), bits };
}

/** The id at `addr` and the largest aligned block around it with one id: by trying every length. */
function oracle(tiling: Tiling, addr: bigint): [number, number] {
  const { starts, ids, bits } = tiling;
  const size = 1n << BigInt(bits);
  const indexOf = (a: bigint): number => {
    let i = 0;
    while (i + 1 < starts.length && starts[i + 1]! <= a) i++;
    return i;
  };
  const id = ids[indexOf(addr)]!;
  for (let p = 0; p <= bits; p++) {
    const blockSize = 1n << BigInt(bits - p);
    const lo = addr - (addr % blockSize);
    const hi = lo + blockSize - 1n;
    let uniform = true;
    for (let i = indexOf(lo); i < starts.length && starts[i]! <= hi; i++) {
      if (ids[i] !== id) {
        uniform = false;
        break;
      }
    }
    if (uniform && hi < size) return [id, p];
  }
  throw new Error('unreachable: a host block is always uniform');
}

function build4(tiling: Tiling): RangeTable4 {
  const b = new RangeBuilder4();
  tiling.starts.forEach((s, i) => {
    const end = i + 1 < tiling.starts.length ? tiling.starts[i + 1]! - 1n : 0xffffffffn;
    b.add(Number(s), Number(end), tiling.ids[i]!);
  });
  return b.build();
}

const toWords = (x: bigint): [number, number, number, number] => [
  Number((x >> 96n) & 0xffffffffn),
  Number((x >> 64n) & 0xffffffffn),
  Number((x >> 32n) & 0xffffffffn),
  Number(x & 0xffffffffn),
];

function build6(tiling: Tiling) {
  const b = new RangeBuilder6();
  tiling.starts.forEach((s, i) => {
    const end = i + 1 < tiling.starts.length ? tiling.starts[i + 1]! - 1n : (1n << 128n) - 1n;
    b.add(toWords(s), toWords(end), tiling.ids[i]!);
  });
  return b.build();
}

/** 32-bit values that share prefixes often: a few bases plus small offsets, and arbitrary values. */
const word32 = fc.oneof(
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.constantFrom(0, 1, 0x0a000000, 0x0a140000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff),
  fc.tuple(fc.constantFrom(0x0a000000, 0xc0000200, 0x80000000), fc.integer({ min: 0, max: 4096 })).map(([b, o]) => (b + o) >>> 0),
);
const ids = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 6 });

test('RangeTable4.lookup matches the brute-force oracle on random tilings', (t) => {
  fc.assert(
    fc.property(fc.array(word32, { maxLength: 40 }), ids, fc.array(word32, { minLength: 1, maxLength: 20 }), (bounds, idList, probes) => {
      const tiling = tilingFrom(bounds.map(BigInt), idList, 32);
      const table = build4(tiling);
      // The same table with one byte per id (as answer classes keep them) must look up alike.
      const narrow = new RangeTable4(table.starts, narrowIds(table.ids, 4));
      // Probe the boundaries and their neighbours too: that is where off-by-one errors live.
      const edges = tiling.starts.flatMap((s) => [s, s - 1n, s + 1n]).filter((x) => x >= 0n && x <= 0xffffffffn);
      for (const addr of [...probes.map(BigInt), ...edges]) {
        const p = table.lookup(Number(addr));
        const got: [number, number] = [unpackId(p), unpackPrefix(p)];
        const want = oracle(tiling, addr);
        if (got[0] !== want[0] || got[1] !== want[1]) throw new Error(`${addr}: got ${got.join()}, want ${want.join()}`);
        if (narrow.lookup(Number(addr)) !== p) throw new Error(`${addr}: one-byte ids give ${narrow.lookup(Number(addr))}, four-byte ${p}`);
      }
    }),
    { seed: 20261130, numRuns: 300 },
  );
  t.pass();
});

const word128 = fc
  .tuple(word32, fc.constantFrom(0, 0xffffffff, 1), word32, fc.oneof(word32, fc.constant(0)), fc.integer({ min: 0, max: 3 }))
  .map(([w0, w1, w2, w3, shape]) => {
    // Shapes put the variation in different words, so prefixes of every length occur.
    const words = shape === 0 ? [w0, 0, 0, 0] : shape === 1 ? [0x20010db8, w1, w2, 0] : shape === 2 ? [0x20010db8, 0, w2, w3] : [w0, w1, w2, w3];
    return words.reduce((acc, w) => (acc << 32n) | BigInt(w >>> 0), 0n);
  });

test('RangeTable6.lookup matches the brute-force oracle on random tilings', (t) => {
  fc.assert(
    fc.property(fc.array(word128, { maxLength: 40 }), ids, fc.array(word128, { minLength: 1, maxLength: 20 }), (bounds, idList, probes) => {
      const tiling = tilingFrom(bounds, idList, 128);
      const table = build6(tiling);
      const narrow = new RangeTable6(table.starts, narrowIds(table.ids, 4));
      const edges = tiling.starts.flatMap((s) => [s, s - 1n, s + 1n]).filter((x) => x >= 0n && x < 1n << 128n);
      for (const addr of [...probes, ...edges]) {
        const p = table.lookup(...toWords(addr));
        const got: [number, number] = [unpackId(p), unpackPrefix(p)];
        const want = oracle(tiling, addr);
        if (got[0] !== want[0] || got[1] !== want[1]) throw new Error(`${addr.toString(16)}: got ${got.join()}, want ${want.join()}`);
        if (narrow.lookup(...toWords(addr)) !== p) throw new Error(`${addr.toString(16)}: one-byte ids differ from four-byte ones`);
      }
    }),
    { seed: 20261130, numRuns: 300 },
  );
  t.pass();
});

test('an IPv4 table built in steps yields 16 times and answers as one built at once', (t) => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: 0xffffffff }), { maxLength: 400 }),
      fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 1, maxLength: 50 }),
      (cuts, probes) => {
        const starts = Uint32Array.from([0, ...cuts.sort((a, b) => a - b)]);
        const ids = Uint32Array.from(starts, (_, i) => i % 7);
        const steps = RangeTable4.inSteps(starts, ids);
        let yields = 0;
        let next = steps.next();
        for (; !next.done; next = steps.next()) yields++;
        // A location reload builds the direct index in slices: in one turn it held the event loop 30-76 ms (issue 17).
        t.is(yields, 16);
        const whole = new RangeTable4(starts, ids);
        for (const a of probes) t.is(next.value.lookup(a), whole.lookup(a));
      },
    ),
    { seed: 17, numRuns: 50 },
  );
});
