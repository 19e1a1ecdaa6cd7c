import { RangeTable4, type RangeIds } from './rangeTable.js';

/**
 * IPv4 range table laid out for lookups on cold CPU caches: the answer-class tables of the records
 * (`selection/locationClasses.ts`), which every query with a different client address reads once,
 * after the socket work has evicted them. Same contract and results as {@link RangeTable4} (packed
 * `id * 256 + prefixLength`, the prefix being the largest aligned block around the address inside
 * one range: RFC 7871 §7.2.1, docs/PRODUCT.md §8), for ids below 65,536.
 *
 * Layout, per /16 of the address space (two words in `top`, one cache line with its neighbours):
 * - a /16 inside one range holds its lookup result itself (`[DIRECT, packed]`): the prefix of
 *   every address in it is the same (≤ 16), so such a lookup reads nothing else;
 * - otherwise `[offset, n]`: the n ranges meeting the /16 are words `offset … offset + n - 1` of
 *   `words`, each `low 16 start bits << 16 | id`, so the search and the id read share lines. The
 *   first one's low bits are 0 even when it starts before the /16: its true start only matters
 *   through the prefix, and in a /16 with several ranges the prefix of every address is above 16,
 *   decided by the boundaries inside the /16 (the same holds for the last one's end).
 *   A /16 with more than {@link BLOCK} ranges keeps, just before its words, the low start bits of
 *   every BLOCK-th of them (16 bits each): the search reads those first (one line for up to 512
 *   ranges), then one block of BLOCK words — instead of a binary search over the whole /16.
 * So a lookup touches the /16's line of `top` and one or two spots of one bucket, usually in one
 * page, where a sorted-starts table touches its index, a dozen starts and a separate id array.
 * The location reference keeps {@link RangeTable4}: location ids do not fit 16 bits.
 */
export class BucketRangeTable4 {
  /** Number of ranges (as {@link RangeTable4.size}). */
  readonly size: number;
  private readonly top: Uint32Array;
  private readonly words: Uint32Array;
  /** `words` as 16-bit halves: the sample starts of large buckets. */
  private readonly halves: Uint16Array;

  /** The memory the table lives in (one buffer: from `allocate` when it gave one). */
  get buffer(): ArrayBufferLike {
    return this.top.buffer;
  }

  /**
   * @param starts Range starts, ascending, `starts[0] === 0` (as {@link RangeTable4}).
   * @param ids Id per range, each below 65,536.
   * @param allocate Zeroed memory for the table (e.g. `hugePages.ts`), or undefined for an ordinary ArrayBuffer.
   * @throws RangeError when an id does not fit 16 bits.
   */
  constructor(starts: Uint32Array, ids: RangeIds, allocate: (bytes: number) => ArrayBuffer | undefined = () => undefined) {
    let layout = built;
    built = undefined;
    if (layout === undefined) {
      const steps = bucketLayoutSteps(starts, ids, allocate);
      let next = steps.next();
      while (!next.done) next = steps.next();
      layout = next.value;
    }
    this.size = layout.size;
    this.top = layout.top;
    this.words = layout.words;
    this.halves = layout.halves;
  }

  /**
   * The same table built as a generator that yields every few thousand /16s (well under a
   * millisecond of work each), so a reload can build a record's answer-class table in slices
   * (`src/pipeline/selection/answerClasses.ts`) instead of holding the event loop for the whole
   * layout (tens to hundreds of milliseconds over the city data on a loaded machine).
   * @throws RangeError as the constructor.
   */
  static *inSteps(
    starts: Uint32Array,
    ids: RangeIds,
    allocate: (bytes: number) => ArrayBuffer | undefined = () => undefined,
  ): Generator<void, BucketRangeTable4, void> {
    const layout = yield* bucketLayoutSteps(starts, ids, allocate);
    // Through the constructor, so every table has the same shape (the query path's lookups stay monomorphic).
    built = layout;
    return new BucketRangeTable4(starts, ids, allocate);
  }

  /**
   * The sorted starts and ids the table was laid out from (neighbouring ranges of one id merged, as
   * {@link RangeTable4} takes them): each /16 gives its ranges' starts from their low bits, and a
   * range meeting several /16s is kept once. Undefined when the table's ranges were not merged
   * (then a merged copy would give other prefixes). One pass over the 65,536 /16s and the ranges.
   */
  ranges(): { starts: Uint32Array; ids: Uint32Array } | undefined {
    const starts = new Uint32Array(this.size);
    const ids = new Uint32Array(this.size);
    let m = 0;
    for (let k = 0; k < 65536; k++) {
      const offset = this.top[2 * k]!;
      const n = this.top[2 * k + 1]!;
      const count = offset === DIRECT ? 1 : n;
      for (let e = 0; e < count; e++) {
        const word = offset === DIRECT ? 0 : this.words[offset + e]!;
        const id = offset === DIRECT ? Math.floor(n / 256) : word & 0xffff;
        if (m > 0 && ids[m - 1] === id) continue;
        if (m === this.size) return undefined;
        starts[m] = (k * 65536 + (word >>> 16)) >>> 0;
        ids[m++] = id;
      }
    }
    return m === this.size ? { starts, ids } : undefined;
  }

  lookup(addr: number): number {
    const t = 2 * (addr >>> 16);
    const offset = this.top[t]!;
    const n = this.top[t + 1]!;
    if (offset === DIRECT) return n;
    const low = addr & 0xffff;
    let lo = offset;
    let hi = offset + n - 1;
    if (n > BLOCK) {
      const h = this.halves;
      const m = Math.ceil(n / BLOCK);
      const base = 2 * (offset - ((m + 1) >>> 1));
      let a = 0;
      let b = m - 1;
      while (a < b) {
        const mid = (a + b + 1) >>> 1;
        if (h[base + mid]! <= low) a = mid;
        else b = mid - 1;
      }
      lo = offset + a * BLOCK;
      if (lo + BLOCK - 1 < hi) hi = lo + BLOCK - 1;
    }
    const w = this.words;
    const key = ((low << 16) | 0xffff) >>> 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (w[mid]! <= key) lo = mid;
      else hi = mid - 1;
    }
    const word = w[lo]!;
    // The first range of a /16 starts at or before it, the last ends at or after it: their outer
    // boundaries give prefixes ≤ 16, below the inner boundary's (see the class comment).
    const fromLow = lo === offset ? 0 : 1 + Math.clz32(low ^ ((word >>> 16) - 1));
    const fromHigh = lo === offset + n - 1 ? 0 : 1 + Math.clz32(low ^ (w[lo + 1]! >>> 16));
    return (word & 0xffff) * 256 + (fromLow > fromHigh ? fromLow : fromHigh);
  }
}

/** Ranges per block of a large bucket: 16 words, one cache line (64 bytes). */
const BLOCK = 16;
/** `top` marker of a /16 inside one range (never an offset: `words` is shorter). */
const DIRECT = 0xffffffff;

/** Words of 16-bit samples before a bucket of `count` ranges (one per BLOCK, two per word). */
function sampleWords(count: number): number {
  return count > BLOCK ? (Math.ceil(count / BLOCK) + 1) >>> 1 : 0;
}

/** The last range starting inside /16 `k`, given `i0`, the last starting at or before it. */
function lastIn(starts: Uint32Array, i0: number, k: number): number {
  let i = i0;
  const end = (k + 1) * 65536;
  while (i + 1 < starts.length && starts[i + 1]! < end) i++;
  return i;
}

/** The fields of a {@link BucketRangeTable4}. */
interface BucketLayout {
  readonly size: number;
  readonly top: Uint32Array;
  readonly words: Uint32Array;
  readonly halves: Uint16Array;
}

/** A layout {@link BucketRangeTable4.inSteps} finished, taken by the constructor it calls next. */
let built: BucketLayout | undefined;

/** /16s (or ranges, for the id check) handled between two yields of {@link bucketLayoutSteps}. */
const LAYOUT_STEP = 4096;

/** The layout of {@link BucketRangeTable4} (see the class comment), yielding every {@link LAYOUT_STEP} units. */
function* bucketLayoutSteps(starts: Uint32Array, ids: RangeIds, allocate: (bytes: number) => ArrayBuffer | undefined): Generator<void, BucketLayout, void> {
  const n = starts.length;
  for (let i = 0; i < n; i++) {
    if (ids[i]! > 0xffff) throw new RangeError(`range ${i} has id ${ids[i]}, above 65535`);
    if (i % (LAYOUT_STEP * 16) === LAYOUT_STEP * 16 - 1) yield;
  }
  const reference = yield* RangeTable4.inSteps(starts, ids);
  // First pass: which ranges meet each /16 (first[k] … lastIn(k)), and the words they take.
  const first = new Uint32Array(65536);
  let j = 0;
  let total = 0;
  for (let k = 0; k < 65536; k++) {
    while (j + 1 < n && starts[j + 1]! <= k * 65536) j++;
    first[k] = j;
  }
  for (let k = 0; k < 65536; k++) {
    const count = lastIn(starts, first[k]!, k) - first[k]! + 1;
    if (count > 1) total += sampleWords(count) + count;
    if (k % LAYOUT_STEP === LAYOUT_STEP - 1) yield;
  }
  // `top` and `words` in one buffer: one allocation, so huge pages (when given) cover both.
  const bytes = (2 * 65536 + total) * 4;
  const buffer = allocate(bytes) ?? new ArrayBuffer(bytes);
  const top = new Uint32Array(buffer, 0, 2 * 65536);
  const words = new Uint32Array(buffer, 2 * 65536 * 4, total);
  const halves = new Uint16Array(buffer, 2 * 65536 * 4, 2 * total);
  let offset = 0;
  for (let k = 0; k < 65536; k++) {
    if (k % LAYOUT_STEP === LAYOUT_STEP - 1) yield;
    const i0 = first[k]!;
    const count = lastIn(starts, i0, k) - i0 + 1;
    if (count === 1) {
      top[2 * k] = DIRECT;
      top[2 * k + 1] = reference.lookup(k * 65536);
      continue;
    }
    offset += sampleWords(count);
    top[2 * k] = offset;
    top[2 * k + 1] = count;
    for (let e = 0; e < count; e++) {
      const low = e === 0 ? 0 : starts[i0 + e]! & 0xffff;
      words[offset + e] = ((low << 16) | ids[i0 + e]!) >>> 0;
      if (count > BLOCK && e % BLOCK === 0) halves[2 * (offset - sampleWords(count)) + e / BLOCK] = low;
    }
    offset += count;
  }
  return { size: n, top, words, halves };
}
