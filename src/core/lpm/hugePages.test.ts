import test from 'ava';
import { readFileSync } from 'node:fs';
import { BucketRangeTable4 } from './bucketRangeTable.js';
import { hugePageBuffer, rangesInHugePages } from './hugePages.js';
import { loadGeoAddon } from './nativeAddon.js';
import { RangeTable6 } from './rangeTable.js';
import { plainRangeLookup } from '../../../test/support/plainRangeLookup.js';
import { seededUint32 } from '../../../test/support/seededRandom.js';

const MiB = 1 << 20;

/** Sizes (kB) of this process's mappings advised for transparent huge pages (smaps `THPeligible: 1`). */
function hugePageEligibleMappingsKb(): number[] {
  const out: number[] = [];
  let size = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^Size:\s+(\d+) kB/.exec(line);
    if (m) size = Number(m[1]);
    if (/^THPeligible:\s+1/.test(line)) out.push(size);
  }
  return out;
}

test('hugePageBuffer: a zeroed, writable buffer of the size asked, in a 2 MiB-aligned mapping advised for huge pages', (t) => {
  t.is(typeof loadGeoAddon().addon?.hugePageBuffer, 'function', 'the native addon (npm run build:native) provides hugePageBuffer');
  const bytes = 2.25 * MiB + 12;
  const buffer = hugePageBuffer(bytes);
  t.truthy(buffer);
  t.is(buffer!.byteLength, bytes);
  const words = new Uint32Array(buffer!, 0, (bytes - 12) / 4);
  t.true(words.every((w) => w === 0));
  words[words.length - 1] = 0xdeadbeef;
  t.is(new DataView(buffer!).getUint32(bytes - 16, true), 0xdeadbeef);
  // The kernel marks the mapping eligible when transparent huge pages are in `madvise` or `always`
  // mode (this machine: `madvise`). 2.25 MiB + 12 bytes ends at the next 4 KiB page (rounding up
  // to 4 MiB would waste 1.75 MiB: the tail stays in ordinary pages); 3.75 MiB ends at 4 MiB.
  const thp = !/\[never\]/.test(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'));
  if (thp) t.true(hugePageEligibleMappingsKb().includes(2.25 * 1024 + 4), `${hugePageEligibleMappingsKb().join()}`);
  const nearlyWhole = hugePageBuffer(3.75 * MiB);
  t.is(nearlyWhole!.byteLength, 3.75 * MiB);
  if (thp) t.true(hugePageEligibleMappingsKb().includes(4 * 1024), `${hugePageEligibleMappingsKb().join()}`);
  // Small tables stay in ordinary memory: a 2 MiB page for them would be mostly waste.
  t.is(hugePageBuffer(MiB - 1), undefined);
  const addon = loadGeoAddon().addon!;
  t.throws(() => addon.hugePageBuffer!(0), { instanceOf: RangeError });
  t.throws(() => addon.hugePageBuffer!('4096' as unknown as number), { instanceOf: TypeError });
});

test('a bucket table in huge pages looks up as one in ordinary memory', (t) => {
  const next = seededUint32(11);
  const set = new Set<number>([0]);
  for (let i = 0; i < 300_000; i++) set.add(next() & 0xffffff00);
  const starts = Uint32Array.from([...set].sort((a, b) => a - b));
  const ids = Uint8Array.from(starts, (_, i) => i % 200);
  const plain = new BucketRangeTable4(starts, ids);
  let allocated = 0;
  const huge = new BucketRangeTable4(starts, ids, (bytes) => {
    allocated = bytes;
    return hugePageBuffer(bytes);
  });
  t.true(allocated > MiB);
  for (let i = 0; i < 100_000; i++) {
    const a = next();
    if (huge.lookup(a) !== plain.lookup(a)) return t.fail(`address ${a}: ${huge.lookup(a)} vs ${plain.lookup(a)}`);
  }
  t.pass();
});

test('rangesInHugePages copies starts and ids with their types, and keeps small tables where they are', (t) => {
  const starts = Uint32Array.from({ length: 300_000 }, (_, i) => i * 4);
  const ids = Uint8Array.from({ length: 300_000 }, (_, i) => i % 7);
  const copy = rangesInHugePages(starts, ids);
  t.not(copy.starts, starts);
  t.true(copy.ids instanceof Uint8Array);
  t.is(copy.starts.buffer, copy.ids.buffer);
  t.deepEqual([copy.starts.length, copy.ids.length, copy.starts[299_999], copy.ids[299_999]], [300_000, 300_000, 299_999 * 4, 299_999 % 7]);
  t.true(copy.starts.every((v, i) => v === starts[i]) && copy.ids.every((v, i) => v === ids[i]));
  const smallStarts = Uint32Array.of(0, 4);
  const smallIds = Uint16Array.of(1, 2);
  const small = rangesInHugePages(smallStarts, smallIds);
  t.true(small.starts === smallStarts && small.ids === smallIds);
});

test('an IPv6 class table copied into huge pages equals a plain binary search over the same ranges', (t) => {
  const next = seededUint32(12);
  const word = (): bigint => BigInt(next());
  const set = new Set<bigint>([0n, (1n << 128n) - 1n]);
  // /32 … /64 networks in a few dense /16s (as GeoLite2's IPv6 ranges), and arbitrary starts.
  for (let i = 0; i < 60_000; i++) set.add((0x2a02n << 112n) | ((word() & 0xffffn) << 96n) | (word() << 64n));
  for (let i = 0; i < 2_000; i++) set.add((word() << 96n) | (word() << 64n) | (word() << 32n) | word());
  const sorted = [...set].sort((a, b) => (a < b ? -1 : 1));
  const starts = new Uint32Array(4 * sorted.length);
  sorted.forEach((s, i) => {
    for (let w = 0; w < 4; w++) starts[4 * i + w] = Number((s >> BigInt(96 - 32 * w)) & 0xffffffffn);
  });
  const ids = Uint8Array.from(sorted, (_, i) => (i * 7) % 219);
  const copy = rangesInHugePages(starts, ids);
  t.not(copy.starts, starts, 'large enough for huge pages');
  const table = new RangeTable6(copy.starts, copy.ids);
  const probes = [0n, 1n, (1n << 128n) - 1n, (1n << 128n) - 2n];
  for (const s of sorted) probes.push(s, s - 1n, s + 1n);
  for (let i = 0; i < 20_000; i++) probes.push((word() << 96n) | (word() << 64n) | (word() << 32n) | word());
  for (const a of probes) {
    if (a < 0n || a >= 1n << 128n) continue;
    const w = [0, 1, 2, 3].map((k) => Number((a >> BigInt(96 - 32 * k)) & 0xffffffffn));
    const got = table.lookup(w[0]!, w[1]!, w[2]!, w[3]!);
    const want = plainRangeLookup(sorted, ids, a, 128);
    if (got !== want) return t.fail(`${a.toString(16)}: got ${got >>> 8}/${got & 255}, want ${want >>> 8}/${want & 255}`);
  }
  t.pass();
});
