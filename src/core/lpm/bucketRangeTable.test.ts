import test from 'ava';
import { plainRangeLookup } from '../../../test/support/plainRangeLookup.js';
import { seededUint32 } from '../../../test/support/seededRandom.js';
import { BucketRangeTable4 } from './bucketRangeTable.js';
import { RangeTable4 } from './rangeTable.js';

/**
 * A seeded tiling with the shapes the bucket layout treats apart: /16s inside one range (ranges
 * spanning many /16s, some starting or ending exactly on a /16 edge), /16s with a few ranges, with
 * more than one block (16) and with more than 512 ranges (several lines of samples), ranges
 * crossing into the next /16, and neighbours with different ids.
 */
function seededTiling(seed: number, maxId: number): { starts: Uint32Array; ids: Uint32Array } {
  const next = seededUint32(seed);
  const set = new Set<number>([0]);
  for (let i = 0; i < 200; i++) set.add(next() >>> 0); // sparse: mostly single-range /16s
  for (let i = 0; i < 40; i++) set.add((next() & 0xffff0000) >>> 0); // starts on /16 edges
  for (const count of [2, 3, 15, 16, 17, 33, 300, 700, 4000]) {
    const base = (next() & 0xffff0000) >>> 0;
    for (let i = 0; i < count; i++) set.add((base + (next() & 0xffff)) >>> 0);
  }
  set.add(0xffffffff); // a one-address range at the very end
  const starts = Uint32Array.from([...set].sort((a, b) => a - b));
  const ids = new Uint32Array(starts.length);
  for (let i = 0; i < ids.length; i++) {
    let id = next() % (maxId + 1);
    if (i > 0 && id === ids[i - 1]) id = (id + 1) % (maxId + 1);
    ids[i] = id;
  }
  return { starts, ids };
}

/** Every start and its neighbours, every /16 edge near a start, the first and last address, and random ones. */
function probes(starts: Uint32Array, seed: number): number[] {
  const out = [0, 1, 0xffff, 0x10000, 0xfffeffff, 0xffff0000, 0xfffffffe, 0xffffffff];
  for (const s of starts) {
    const k = s & 0xffff0000;
    out.push(s, s - 1, s + 1, k, k - 1, k + 0xffff, k + 0x10000);
  }
  const next = seededUint32(seed);
  for (let i = 0; i < 20_000; i++) out.push(next());
  // Random addresses inside the /16s of random starts: the dense buckets.
  for (let i = 0; i < 20_000; i++) out.push(((starts[next() % starts.length]! & 0xffff0000) | (next() & 0xffff)) >>> 0);
  return out.filter((a) => a >= 0 && a <= 0xffffffff);
}

for (const [seed, maxId] of [
  [1, 7],
  [2, 255],
  [3, 65535],
] as const) {
  test(`BucketRangeTable4 equals a plain binary search over the same ranges (seed ${seed}, ids ≤ ${maxId})`, (t) => {
    const { starts, ids } = seededTiling(seed, maxId);
    const bigStarts = Array.from(starts, BigInt);
    const table = new BucketRangeTable4(starts, ids);
    const reference = new RangeTable4(starts, ids);
    let checked = 0;
    for (const addr of probes(starts, seed)) {
      const want = plainRangeLookup(bigStarts, ids, BigInt(addr), 32);
      const got = table.lookup(addr);
      if (got !== want)
        return t.fail(
          `${addr >>> 24}.${(addr >>> 16) & 255}.${(addr >>> 8) & 255}.${addr & 255}: got ${got >>> 8}/${got & 255}, want ${want >>> 8}/${want & 255}`,
        );
      if (reference.lookup(addr) !== want) return t.fail(`RangeTable4 differs at ${addr}`);
      checked++;
    }
    t.true(checked > 40_000);
    t.is(table.size, starts.length);
  });
}

test('BucketRangeTable4.inSteps yields while it lays out the /16s and gives the table the constructor gives', (t) => {
  // A reload builds answer-class tables in slices (src/pipeline/selection/answerClasses.ts): the
  // layout over the whole /16 space was one step of 74–1013 ms on a loaded machine (issue 17).
  const { starts, ids } = seededTiling(4, 65535);
  const steps = BucketRangeTable4.inSteps(starts, ids);
  let yields = 0;
  let next = steps.next();
  while (!next.done) {
    yields++;
    next = steps.next();
  }
  t.true(yields >= 32, `${yields} yields`);
  const whole = new BucketRangeTable4(starts, ids);
  t.is(next.value.size, whole.size);
  t.deepEqual(Object.keys(next.value), Object.keys(whole), 'the same shape (monomorphic lookups)');
  for (const addr of probes(starts, 4)) if (next.value.lookup(addr) !== whole.lookup(addr)) return t.fail(`differs at ${addr}`);
  t.throws(() => [...BucketRangeTable4.inSteps(Uint32Array.of(0, 1), Uint32Array.of(0, 0x10000))], { message: /id 65536/ });
});

test('BucketRangeTable4: the whole space as one range, and ids beyond 16 bits refused', (t) => {
  const one = new BucketRangeTable4(Uint32Array.of(0), Uint8Array.of(5));
  t.deepEqual([one.lookup(0), one.lookup(0x0a000001), one.lookup(0xffffffff)], [5 * 256, 5 * 256, 5 * 256]);
  // 10.0.0.0/8 inside one id and 10.20.30.0/24 apart: /16s inside 10/8 answer from the index.
  const starts = Uint32Array.of(0, 0x0a000000, 0x0a141e00, 0x0a141f00, 0x0b000000);
  const table = new BucketRangeTable4(starts, Uint8Array.of(0, 1, 2, 1, 0));
  t.deepEqual(
    [0x0a141e05, 0x0a146300, 0x0a630000, 0x0b000000].map((a) => [table.lookup(a) >>> 8, table.lookup(a) & 255]),
    [
      [2, 24],
      [1, 18],
      [1, 10],
      [0, 8],
    ],
  );
  t.throws(() => new BucketRangeTable4(Uint32Array.of(0, 1), Uint32Array.of(0, 0x10000)), { message: /id 65536/ });
});

test('BucketRangeTable4.ranges gives back the starts and ids it was laid out from (what the fast path copies), undefined for unmerged ranges', (t) => {
  for (const [seed, maxId] of [
    [1, 7],
    [2, 255],
    [3, 65535],
    [4, 1],
  ] as const) {
    const { starts, ids } = seededTiling(seed, maxId);
    const ranges = new BucketRangeTable4(starts, ids).ranges();
    t.deepEqual(ranges, { starts, ids }, `seed ${seed}`);
  }
  t.deepEqual(new BucketRangeTable4(Uint32Array.of(0), Uint32Array.of(3)).ranges(), { starts: Uint32Array.of(0), ids: Uint32Array.of(3) });
  // Two neighbours of one id (never built by the class tables): a merged copy would give other prefixes.
  t.is(new BucketRangeTable4(Uint32Array.of(0, 0x10000000), Uint32Array.of(2, 2)).ranges(), undefined);
});
