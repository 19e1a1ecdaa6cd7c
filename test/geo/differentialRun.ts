import { readFileSync } from 'node:fs';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { loadGeoAddon } from '../../src/core/lpm/nativeAddon.js';
import { BucketRangeTable4 } from '../../src/core/lpm/bucketRangeTable.js';
import { RangeTable4 } from '../../src/core/lpm/rangeTable.js';
import { compareDbs, insideNetworks, uniformV4, uniformV6, type Comparison } from './addressSets.js';
import { seededUint32 } from '../support/seededRandom.js';
import { readCityImage } from './cityImage.js';
import { readImage } from '../../src/capabilities/geo/compiledImage.js';
import { ipv4 } from '../../src/core/net/ipAddress.js';

/**
 * The differential check as a program, for the sanitizer run (test/geo/sanitizer.test.ts starts
 * it from dist/ under LD_PRELOAD=libasan with $GSLBD_NATIVE_ADDON pointing at the ASan+UBSan
 * build): native vs TypeScript on GeoLite2-City, then the addon's argument checks. Prints one JSON
 * line; exits 1 on any mismatch.
 *
 *   node dist/test/geo/differentialRun.js [addresses per set, default 200000]
 */
const n = Number(process.argv[2] ?? 200_000);
const image = readCityImage();
const native = openLocationDb(image, 'native').db;
const reference = openLocationDb(image, 'typescript').db;
const rand = seededUint32(7);
const results: Comparison[] = [
  compareDbs(native, reference, 4, uniformV4(rand, n)),
  compareDbs(native, reference, 6, uniformV6(rand, n)),
  compareDbs(native, reference, 4, insideNetworks(image, 4, rand, n)),
  compareDbs(native, reference, 6, insideNetworks(image, 6, rand, n)),
  // Batch sizes that are not a multiple of the addon's 16 lanes, and empty.
  compareDbs(native, reference, 4, uniformV4(rand, 13)),
  compareDbs(native, reference, 6, uniformV6(rand, 0)),
];

// Argument errors must throw, never read out of bounds.
const addon = loadGeoAddon().addon!;
const table = addon.open(image.buffer, image.layout);
const rejected: string[] = [];
const expectThrow = (what: string, f: () => unknown): void => {
  try {
    f();
  } catch {
    rejected.push(what);
    return;
  }
  throw new Error(`${what} did not throw`);
};
expectThrow('short ids', () => table.lookup4Batch(new Uint32Array(8), new Uint32Array(4), new Uint8Array(8)));
expectThrow('ragged IPv6 words', () => table.lookup6Batch(new Uint32Array(6), new Uint32Array(2), new Uint8Array(2)));
expectThrow('wrong array type', () => table.lookup4Batch(new Float64Array(4) as unknown as Uint32Array, new Uint32Array(4), new Uint8Array(4)));
expectThrow('string address', () => table.lookup4('10.0.0.1' as unknown as number));
expectThrow('section outside buffer', () => addon.open(image.buffer, { ...image.layout, v6IdsOffset: image.buffer.byteLength - 4 }));
expectThrow('index bits', () => addon.open(image.buffer, { ...image.layout, v4IndexBits: 30 }));
expectThrow('unaligned section', () => addon.open(image.buffer, { ...image.layout, v4StartsOffset: image.layout.v4StartsOffset + 2 }));
expectThrow('ids beyond locations', () => addon.open(image.buffer, { ...image.layout, locationCount: 1 }));
expectThrow('shifted index', () => addon.open(image.buffer, { ...image.layout, v4IndexOffset: image.layout.v4IndexOffset + 4 }));
expectThrow('huge page byte count', () => addon.hugePageBuffer!(0));
expectThrow('huge page byte count type', () => addon.hugePageBuffer!('4096' as unknown as number));

// A released table throws on every lookup, even after its image buffer was detached and freed
// (the sanitizers would report a read of it); release is idempotent.
{
  const copy = readImage(new Uint8Array(image.buffer.slice(0)));
  const db = openLocationDb(copy, 'native').db;
  const released = addon.open(copy.buffer, copy.layout);
  released.release();
  released.release();
  addon.releaseBuffer(copy.buffer);
  db.release!();
  expectThrow('released lookup4', () => released.lookup4(0x0a000001));
  expectThrow('released lookup6', () => released.lookup6());
  expectThrow('released lookup4Batch', () => released.lookup4Batch(new Uint32Array(4), new Uint32Array(4), new Uint8Array(4)));
  expectThrow('released lookup6Batch', () => released.lookup6Batch(new Uint32Array(4), new Uint32Array(1), new Uint8Array(1)));
  expectThrow('released database', () => db.lookup(ipv4(0x0a000001)));
  expectThrow('release of a non-buffer', () => addon.releaseBuffer(new Uint8Array(4) as unknown as ArrayBuffer));
}

// A bucket table (answer classes' IPv4 layout) in the addon's huge-page memory against sorted
// starts, over the city data's IPv4 ranges with ids cut to 16 bits; then collected, so the
// sanitizers also see the memory unmapped.
let hugePageMismatches = 0;
{
  const ids16 = image.v4.ids.map((id) => id & 0xffff);
  const reference = new RangeTable4(image.v4.starts, ids16);
  const huge = new BucketRangeTable4(image.v4.starts, ids16, (bytes) => addon.hugePageBuffer!(bytes));
  for (const a of insideNetworks(image, 4, rand, n)) if (huge.lookup(a) !== reference.lookup(a)) hugePageMismatches++;
  // Unmapped now (at the next turn) rather than by the collector below.
  addon.releaseBuffer(huge.buffer as ArrayBuffer);
}
(globalThis as { gc?: () => void }).gc?.();

const mismatches = results.reduce((s, r) => s + r.mismatches, 0) + hugePageMismatches;
const sanitizers = readFileSync('/proc/self/maps', 'utf8').match(/lib(asan|ubsan)\.so/g) ?? [];
process.stdout.write(
  `${JSON.stringify({ addon: loadGeoAddon().path, sanitizers: [...new Set(sanitizers)], native: native.implementation, reference: reference.implementation, mismatches, hugePageMismatches, results, rejected })}\n`,
);
process.exit(mismatches === 0 ? 0 : 1);
