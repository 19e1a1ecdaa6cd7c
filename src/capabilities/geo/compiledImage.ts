import type { Location } from '../../core/location/location.js';
import type { LocationRecords } from './locationRecords.js';
import type { NativeLayout } from '../../core/lpm/nativeAddon.js';
import type { Tiling } from '../../core/lpm/tiling.js';

/**
 * The compiled location file (`gslbd geo build -o FILE`): a location table and, per address
 * family, the merged range tiling with its direct index, laid out so that one read of the file
 * gives typed-array views with no parsing (the engine loads it zero-copy at start-up; the native
 * addon searches the same bytes). All integers are little-endian; every section starts on a
 * 64-byte boundary.
 *
 * ```
 * offset  size  field
 *      0     8  magic "GSLBGEO1"
 *      8     4  format version (1)
 *     12     4  header size (256)
 *     16     4  location count L (id 0 = unknown location)
 *     20     4  IPv4 range count n4
 *     24     4  IPv6 range count n6
 *     28     4  IPv4 direct-index bits b4
 *     32     4  IPv6 direct-index bits b6
 *     36     4  string pool size in bytes
 *     40     4  metadata size in bytes
 *     44     4  total file size in bytes
 *     48  8×8   section table: (offset u32, byte length u32) for the eight sections below
 *
 * section 0  locations      L × 9 u32: six qualifier string offsets, latitude and longitude as
 *                           i32 in 1e-4 degrees (0x80000000 = unknown), ASN (0 = unknown)
 * section 1  string pool    UTF-8 strings, each ended by a NUL byte; offset 0 is the empty string
 * section 2  IPv4 index     2^b4 + 1 u32: entry k is the range containing address k << (32 - b4)
 * section 3  IPv4 starts    n4 u32, ascending, first 0
 * section 4  IPv4 ids       n4 u32 location ids
 * section 5  IPv6 index     2^b6 + 1 u32 over the top b6 bits of the first word
 * section 6  IPv6 starts    n6 × 4 u32 (most significant word first), ascending, first ::
 * section 7  IPv6 ids       n6 u32
 * after the sections: metadata, UTF-8 JSON {@link ImageMetadata}
 * ```
 *
 * Neighbouring ranges with the same id are merged, so the ECS scope of a lookup is computed from
 * the range bounds (see `rangeTable.ts`); ids are below 2^24 so a packed `id * 256 + prefix` fits
 * 32 bits.
 */
export const IMAGE_MAGIC = 'GSLBGEO1';
export const IMAGE_VERSION = 1;
const HEADER_BYTES = 256;
const SECTION_TABLE = 48;
const SECTIONS = 8;
/** u32 words per location record. */
export const RECORD_WORDS = 9;
/** Latitude/longitude value meaning "unknown". */
export const NO_COORDINATE = -0x80000000;
/** Direct-index bits the builder uses (4 MiB per family; measured in docs/BENCHMARKS.md). */
export const DEFAULT_INDEX_BITS = 20;
/** Exclusive upper bound of location ids. */
export const MAX_LOCATIONS = 1 << 24;

/** What a compiled file says about where its data came from. */
export interface ImageMetadata {
  /** Source names (file paths, package files, "custom entries"), in build order. */
  readonly sources: readonly string[];
  /** ISO 8601 build time. */
  readonly builtAt: string;
  /**
   * What the file was built from, when it was built as the cache of a configuration's sources
   * (`compiledCache.ts`): compared with the sources' stamp at every start, so a stale file is
   * rebuilt, never served. Absent in files built from command-line sources.
   */
  readonly stamp?: string;
}

/** Typed-array views of a compiled file (no copies: every view shares the file's buffer). */
export interface LocationImage {
  readonly buffer: ArrayBuffer;
  /**
   * Whether the image is the whole of `buffer` (a file read or an image built or transferred on
   * its own), so releasing the database may detach and free it (`openLocationDb.ts`); false for an
   * image inside a larger buffer, which other views may share.
   */
  readonly ownsBuffer: boolean;
  readonly locationCount: number;
  readonly records: Uint32Array;
  readonly pool: Uint8Array;
  readonly v4: Tiling & { readonly index: Uint32Array; readonly indexBits: number };
  readonly v6: Tiling & { readonly index: Uint32Array; readonly indexBits: number };
  readonly metadata: ImageMetadata;
  /** Byte offsets the native addon needs (`native/addon.cc` open()). */
  readonly layout: NativeLayout;
}

/** Thrown for a file that is not a valid compiled location file; the message says what is wrong. */
export class ImageError extends Error {}

const align64 = (n: number): number => (n + 63) & ~63;

/**
 * Writes a compiled file image from location records and the two merged tilings; computes the
 * direct indexes.
 * @throws ImageError when there are 2^24 locations or more, or an id has no location.
 */
export function writeImage(
  locations: LocationRecords,
  v4: Tiling,
  v6: Tiling,
  metadata: ImageMetadata,
  indexBits = { v4: DEFAULT_INDEX_BITS, v6: DEFAULT_INDEX_BITS },
): Uint8Array {
  const records = locations.records();
  const pool = locations.pool();
  const count = records.length / RECORD_WORDS;
  if (count >= MAX_LOCATIONS) throw new ImageError(`${count} distinct locations; at most ${MAX_LOCATIONS - 1} fit`);
  for (const [name, t] of [
    ['IPv4', v4],
    ['IPv6', v6],
  ] as const) {
    for (let i = 0; i < t.ids.length; i++) {
      if (t.ids[i]! >= count) throw new ImageError(`${name} range ${i} has location id ${t.ids[i]} of ${count}`);
    }
  }
  const index4 = directIndex(v4, 1, indexBits.v4);
  const index6 = directIndex(v6, 4, indexBits.v6);
  const meta = new TextEncoder().encode(JSON.stringify(metadata));
  const parts: Uint8Array[] = [u8(records), pool, u8(index4), u8(v4.starts), u8(v4.ids), u8(index6), u8(v6.starts), u8(v6.ids)];
  const offsets: number[] = [];
  let at = HEADER_BYTES;
  for (const p of parts) {
    offsets.push(at);
    at = align64(at + p.byteLength);
  }
  const metaOffset = at;
  const total = metaOffset + meta.byteLength;
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  out.set(new TextEncoder().encode(IMAGE_MAGIC), 0);
  const header = [IMAGE_VERSION, HEADER_BYTES, count, v4.ids.length, v6.ids.length, indexBits.v4, indexBits.v6, pool.byteLength, meta.byteLength, total];
  header.forEach((v, i) => dv.setUint32(8 + i * 4, v, true));
  parts.forEach((p, i) => {
    dv.setUint32(SECTION_TABLE + i * 8, offsets[i]!, true);
    dv.setUint32(SECTION_TABLE + i * 8 + 4, p.byteLength, true);
    out.set(p, offsets[i]!);
  });
  out.set(meta, metaOffset);
  return out;
}

/**
 * Reads the header of a compiled file and returns views into it, after checking every section
 * lies inside the buffer (O(1)). The contents are checked by {@link verifyImage} (TypeScript) or
 * by the native addon when it opens the image (the same checks in C++, ~10× faster).
 * @throws ImageError naming what is wrong.
 */
export function readImage(bytes: Uint8Array): LocationImage {
  if (bytes.byteOffset % 8 !== 0) bytes = bytes.slice();
  const buffer = bytes.buffer as ArrayBuffer;
  const base = bytes.byteOffset;
  if (bytes.byteLength < HEADER_BYTES || new TextDecoder().decode(bytes.subarray(0, 8)) !== IMAGE_MAGIC) {
    throw new ImageError(`not a compiled location file (no ${IMAGE_MAGIC} header)`);
  }
  const dv = new DataView(buffer, base, bytes.byteLength);
  const h = (i: number): number => dv.getUint32(8 + i * 4, true);
  const [version, headerBytes, count, n4, n6, bits4, bits6, , metaBytes, total] = Array.from({ length: 10 }, (_, i) => h(i)) as number[];
  if (version !== IMAGE_VERSION) throw new ImageError(`format version ${version}; this gslbd reads version ${IMAGE_VERSION}`);
  if (headerBytes !== HEADER_BYTES || total !== bytes.byteLength) {
    throw new ImageError(`file is ${bytes.byteLength} bytes but its header says ${total} (truncated or corrupt)`);
  }
  if (count! < 1 || count! >= MAX_LOCATIONS || n4! < 1 || n6! < 1) throw new ImageError('header counts are out of range');
  for (const b of [bits4!, bits6!]) if (b < 1 || b > 24) throw new ImageError(`direct-index bits ${b} out of range 1–24`);
  const sections: { offset: number; length: number }[] = [];
  for (let i = 0; i < SECTIONS; i++) {
    const offset = dv.getUint32(SECTION_TABLE + i * 8, true);
    const length = dv.getUint32(SECTION_TABLE + i * 8 + 4, true);
    if (offset % 8 !== 0 || offset + length > bytes.byteLength) throw new ImageError(`section ${i} lies outside the file`);
    sections.push({ offset, length });
  }
  const words = (i: number, expected: number): Uint32Array => {
    const s = sections[i]!;
    if (s.length !== expected * 4) throw new ImageError(`section ${i} has ${s.length} bytes; expected ${expected * 4}`);
    return new Uint32Array(buffer, base + s.offset, expected);
  };
  const records = words(0, count! * RECORD_WORDS);
  const pool = new Uint8Array(buffer, base + sections[1]!.offset, sections[1]!.length);
  const v4 = { index: words(2, 2 ** bits4! + 1), starts: words(3, n4!), ids: words(4, n4!), indexBits: bits4! };
  const v6 = { index: words(5, 2 ** bits6! + 1), starts: words(6, n6! * 4), ids: words(7, n6!), indexBits: bits6! };
  const metaStart = total! - metaBytes!;
  let metadata: ImageMetadata;
  try {
    metadata = JSON.parse(new TextDecoder().decode(bytes.subarray(metaStart, total))) as ImageMetadata;
  } catch {
    throw new ImageError('metadata is not valid JSON');
  }
  const off = (i: number): number => base + sections[i]!.offset;
  return {
    buffer,
    ownsBuffer: base === 0 && bytes.byteLength === buffer.byteLength,
    locationCount: count!,
    records,
    pool,
    v4,
    v6,
    metadata,
    layout: {
      locationCount: count!,
      v4Count: n4!,
      v4IndexBits: bits4!,
      v4IndexOffset: off(2),
      v4StartsOffset: off(3),
      v4IdsOffset: off(4),
      v6Count: n6!,
      v6IndexBits: bits6!,
      v6IndexOffset: off(5),
      v6StartsOffset: off(6),
      v6IdsOffset: off(7),
    },
  };
}

/**
 * Checks the contents of an image: each tiling starts at address 0 with strictly ascending
 * starts, every id has a location and every string offset lies in the pool. O(size): about
 * 40–120 ms for GeoLite2-City on this machine.
 * @throws ImageError naming the first problem.
 */
export function verifyImage(image: LocationImage): void {
  checkTiling('IPv4', image.v4.starts, image.v4.ids, 1, image.locationCount);
  checkTiling('IPv6', image.v6.starts, image.v6.ids, 4, image.locationCount);
  verifyRecords(image);
}

/**
 * Checks that every location record's strings lie inside the string pool. The native addon checks
 * the tilings itself but never reads records (locations are decoded here), so both paths run this
 * one: a corrupt record must fail the load, not decode as an empty qualifier. O(locations), ~1 ms
 * for GeoLite2-City.
 * @throws ImageError naming the first bad location.
 */
export function verifyRecords(image: Pick<LocationImage, 'records' | 'pool'>): void {
  const { records } = image;
  const poolBytes = image.pool.length;
  for (let b = 0; b < records.length; b += RECORD_WORDS) {
    for (let q = 0; q < 6; q++) {
      if (records[b + q]! >= poolBytes) throw new ImageError(`location ${b / RECORD_WORDS} points outside the string pool`);
    }
  }
}

function checkTiling(name: string, starts: Uint32Array, ids: Uint32Array, stride: number, count: number): void {
  for (let w = 0; w < stride; w++) if (starts[w] !== 0) throw new ImageError(`${name} ranges do not start at address 0`);
  const bad = stride === 1 ? firstUnorderedV4(starts) : firstUnorderedV6(starts);
  if (bad >= 0) throw new ImageError(`${name} range ${bad} does not start above range ${bad - 1}`);
  for (let i = 0; i < ids.length; i++) if (ids[i]! >= count) throw new ImageError(`${name} range ${i} has an unknown location id`);
}

function firstUnorderedV4(s: Uint32Array): number {
  for (let i = 1; i < s.length; i++) if (s[i]! <= s[i - 1]!) return i;
  return -1;
}

function firstUnorderedV6(s: Uint32Array): number {
  for (let b = 4; b < s.length; b += 4) {
    const d0 = s[b]! - s[b - 4]!;
    if (d0 > 0) continue;
    if (d0 < 0) return b / 4;
    const d1 = s[b + 1]! - s[b - 3]!;
    if (d1 > 0) continue;
    if (d1 < 0) return b / 4;
    const d2 = s[b + 2]! - s[b - 2]!;
    if (d2 > 0) continue;
    if (d2 < 0 || s[b + 3]! <= s[b - 1]!) return b / 4;
  }
  return -1;
}

/**
 * Direct index of a tiling over the top `bits` bits of each address's first word: entry k is the
 * index of the range containing the first address of block k (the last range starting at or
 * below it); entry 2^bits is the last range.
 */
export function directIndex(t: Tiling, stride: number, bits: number): Uint32Array {
  const n = t.ids.length;
  const shift = 32 - bits;
  const blocks = 2 ** bits;
  const index = new Uint32Array(blocks + 1);
  const startsAtOrBelow = (i: number, k: number): boolean => {
    const top = t.starts[i * stride]! >>> shift;
    if (top !== k) return top < k;
    if ((t.starts[i * stride]! & (shift === 32 ? 0xffffffff : 2 ** shift - 1)) !== 0) return false;
    for (let w = 1; w < stride; w++) if (t.starts[i * stride + w] !== 0) return false;
    return true;
  };
  let j = 0;
  for (let k = 0; k < blocks; k++) {
    while (j + 1 < n && startsAtOrBelow(j + 1, k)) j++;
    index[k] = j;
  }
  index[blocks] = n - 1;
  return index;
}

function u8(a: Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Decodes location `id` of an image (no caching; see ImageLocationTable). */
export function decodeLocation(image: Pick<LocationImage, 'records' | 'pool'>, id: number): Location {
  const r = image.records;
  const b = id * RECORD_WORDS;
  const q: string[] = [];
  for (let i = 0; i < 6; i++) q.push(poolString(image.pool, r[b + i]!));
  const lat = r[b + 6]! | 0;
  const lon = r[b + 7]! | 0;
  const asn = r[b + 8]!;
  const loc: { -readonly [K in keyof Location]: Location[K] } = { qualifiers: q as unknown as Location['qualifiers'] };
  if (lat !== NO_COORDINATE && lon !== NO_COORDINATE) {
    loc.lat = lat / 1e4;
    loc.lon = lon / 1e4;
  }
  if (asn !== 0) loc.asn = asn;
  return loc;
}

/**
 * The strings of a pool already decoded, by offset. The pool holds each string once, and most
 * locations share their continent, country and region with many others: building the answer
 * classes decodes every location of the image (110,000 for the city data, six strings each), and
 * with this cache most of those are a map hit instead of a UTF-8 decode (issue 26: start-up time).
 */
const decodedStrings = new WeakMap<Uint8Array, Map<number, string>>();

function poolString(pool: Uint8Array, offset: number): string {
  if (offset === 0) return '';
  let strings = decodedStrings.get(pool);
  if (!strings) decodedStrings.set(pool, (strings = new Map()));
  let s = strings.get(offset);
  if (s === undefined) {
    let end = offset;
    while (end < pool.length && pool[end] !== 0) end++;
    s = Buffer.from(pool.buffer, pool.byteOffset + offset, end - offset).toString('utf8');
    strings.set(offset, s);
  }
  return s;
}
