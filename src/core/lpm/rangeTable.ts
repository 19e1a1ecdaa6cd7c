/**
 * TypeScript longest-prefix tables over merged ranges: the reference implementation of the
 * location lookup (the native addon implements the same contract faster).
 *
 * A table tiles the whole address space with ranges `[start[i], start[i+1] - 1]`, each carrying a
 * location id (0 = unknown). Neighbouring ranges with the same id are merged when the table is
 * built, so the prefix length a lookup returns is that of the largest aligned block around the
 * address inside which the location is identical: the ECS scope of a location-based answer
 * (RFC 7871 §7.2.1; docs/PRODUCT.md §8). For the range `10.20.31.0–10.20.255.255` and the address
 * `10.20.99.0` that is 18, not the 16 of the enclosing database network.
 *
 * Lookups return a packed number `id * 256 + prefixLength`; {@link unpackId} and
 * {@link unpackPrefix} split it. Packing keeps the query path free of allocation.
 */

/** Location id of a packed lookup result. */
export function unpackId(packed: number): number {
  return Math.floor(packed / 256);
}

/** Prefix length (bits) of a packed lookup result. */
export function unpackPrefix(packed: number): number {
  return packed & 255;
}

const TWO_32 = 0x1_0000_0000;

/**
 * One record's location class tables as plain arrays (`RangeTable4` / `RangeTable6` layout): range
 * starts ascending from 0 (IPv6: four words per start, most significant first) and the class id
 * of each range, neighbouring ranges of one class merged. What the native fast path copies.
 */
export interface ClassRanges {
  readonly v4starts: Uint32Array;
  readonly v4ids: Uint32Array;
  readonly v6starts: Uint32Array;
  readonly v6ids: Uint32Array;
}

/** A class table that can give its ranges ({@link ClassRanges}) to be copied elsewhere (`LocationClasses`). */
export interface ClassRangeSource {
  /**
   * The tables' ranges, derived on each call (IPv4 from the bucket layout when it has one: one pass
   * over 65,536 /16s and the ranges). Undefined when they cannot be given (the tables were released).
   */
  classRanges(): ClassRanges | undefined;
}

/**
 * Location ids (or answer-class ids) per range: the narrowest array that holds them. Tables whose
 * ids are few (a record's answer classes: hundreds) keep one byte per range instead of four, so
 * more of a table stays in the CPU caches between queries.
 */
export type RangeIds = Uint32Array | Uint16Array | Uint8Array;

/** `ids` in the narrowest {@link RangeIds} array that holds every value below `count`. */
export function narrowIds(ids: Uint32Array, count: number): RangeIds {
  if (count <= 0x100) return Uint8Array.from(ids);
  if (count <= 0x10000) return Uint16Array.from(ids);
  return ids;
}

/**
 * For each value of the top 16 address bits, the index of the last range starting at or below
 * that /16: it narrows the binary search to the ranges inside one /16 (a DXR-style direct index).
 */
function directIndex(count: number, startTop16: (i: number) => number, startLow: (i: number) => boolean): Uint32Array {
  const steps = directIndexSteps(count, startTop16, startLow);
  let next = steps.next();
  while (!next.done) next = steps.next();
  return next.value;
}

/** /16s indexed between two yields of {@link directIndexSteps}: 16 steps over the address space. */
const INDEX_STEP = 4096;

/**
 * {@link directIndex} as a generator: over the city data's million IPv4 ranges the index took
 * 30–76 ms in one turn of a location reload at load 3 (issue 17).
 */
function* directIndexSteps(count: number, startTop16: (i: number) => number, startLow: (i: number) => boolean): Generator<void, Uint32Array, void> {
  const index = new Uint32Array(65537);
  let j = 0;
  for (let k = 0; k <= 65536; k++) {
    while (j + 1 < count && (startTop16(j + 1) < k || (startTop16(j + 1) === k && startLow(j + 1)))) j++;
    index[k] = j;
    if (k % INDEX_STEP === INDEX_STEP - 1) yield;
  }
  return index;
}

/** The top 16 bits of IPv4 range `i`'s start, and whether its low 16 bits are zero. */
function top16Of(starts: Uint32Array): [(i: number) => number, (i: number) => boolean] {
  return [(i) => starts[i]! >>> 16, (i) => (starts[i]! & 0xffff) === 0];
}

/** IPv4 direct indexes built by {@link RangeTable4.inSteps}, taken by the constructor it calls. */
let builtIndex: Uint32Array | undefined;

/** IPv4 table: sorted range starts and their location ids. */
export class RangeTable4<Ids extends RangeIds = Uint32Array> {
  private readonly index: Uint32Array;

  constructor(
    /** Range starts, ascending, `starts[0] === 0`. */
    readonly starts: Uint32Array,
    /** Location id per range. */
    readonly ids: Ids,
  ) {
    this.index = builtIndex ?? directIndex(starts.length, ...top16Of(starts));
    builtIndex = undefined;
  }

  /**
   * The same table with its direct index built as a generator that yields every 4,096 /16s, so a
   * reload can build it in slices (`bucketRangeTable.ts`).
   */
  static *inSteps<Ids extends RangeIds>(starts: Uint32Array, ids: Ids): Generator<void, RangeTable4<Ids>, void> {
    const index = yield* directIndexSteps(starts.length, ...top16Of(starts));
    // Through the constructor, so every table has the same shape (the query path's lookups stay monomorphic).
    builtIndex = index;
    return new RangeTable4(starts, ids);
  }

  /** Packed `id * 256 + prefix` for a 32-bit address. */
  lookup(addr: number): number {
    const starts = this.starts;
    const top = addr >>> 16;
    let lo = this.index[top]!;
    let hi = this.index[top + 1]!;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= addr) lo = mid;
      else hi = mid - 1;
    }
    const start = starts[lo]!;
    const next = lo + 1 < starts.length ? starts[lo + 1]! : TWO_32;
    const fromLow = start === 0 ? 0 : 1 + Math.clz32((addr ^ (start - 1)) >>> 0);
    const fromHigh = next === TWO_32 ? 0 : 1 + Math.clz32((addr ^ next) >>> 0);
    return this.ids[lo]! * 256 + (fromLow > fromHigh ? fromLow : fromHigh);
  }

  /** Number of ranges after merging. */
  get size(): number {
    return this.starts.length;
  }
}

/** IPv6 table: range starts as four 32-bit words each (stride 4), and their location ids. */
export class RangeTable6<Ids extends RangeIds = Uint32Array> {
  private readonly index: Uint32Array;

  constructor(
    /** Range starts, 4 words per range, ascending; the first is `::`. */
    readonly starts: Uint32Array,
    readonly ids: Ids,
  ) {
    this.index = directIndex(
      ids.length,
      (i) => starts[i * 4]! >>> 16,
      (i) => (starts[i * 4]! & 0xffff) === 0 && starts[i * 4 + 1] === 0 && starts[i * 4 + 2] === 0 && starts[i * 4 + 3] === 0,
    );
  }

  /** Packed `id * 256 + prefix` for a 128-bit address given as four words. */
  lookup(a0: number, a1: number, a2: number, a3: number): number {
    const s = this.starts;
    const n = this.ids.length;
    const top = a0 >>> 16;
    let lo = this.index[top]!;
    let hi = this.index[top + 1]!;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (compare(s, mid * 4, a0, a1, a2, a3) <= 0) lo = mid;
      else hi = mid - 1;
    }
    const b = lo * 4;
    let fromLow = 0;
    if ((s[b]! | s[b + 1]! | s[b + 2]! | s[b + 3]!) !== 0) {
      // The address just below the range start: decrement the 128-bit start.
      let w3 = s[b + 3]!;
      let w2 = s[b + 2]!;
      let w1 = s[b + 1]!;
      let w0 = s[b]!;
      if (w3 !== 0) w3 = (w3 - 1) >>> 0;
      else {
        w3 = 0xffffffff;
        if (w2 !== 0) w2 = (w2 - 1) >>> 0;
        else {
          w2 = 0xffffffff;
          if (w1 !== 0) w1 = (w1 - 1) >>> 0;
          else {
            w1 = 0xffffffff;
            w0 = (w0 - 1) >>> 0;
          }
        }
      }
      fromLow = 1 + clz128(a0 ^ w0, a1 ^ w1, a2 ^ w2, a3 ^ w3);
    }
    let fromHigh = 0;
    if (lo + 1 < n) {
      const c = b + 4;
      fromHigh = 1 + clz128(a0 ^ s[c]!, a1 ^ s[c + 1]!, a2 ^ s[c + 2]!, a3 ^ s[c + 3]!);
    }
    return this.ids[lo]! * 256 + (fromLow > fromHigh ? fromLow : fromHigh);
  }

  get size(): number {
    return this.ids.length;
  }
}

function compare(s: Uint32Array, i: number, a0: number, a1: number, a2: number, a3: number): number {
  return s[i]! !== a0 ? s[i]! - a0 : s[i + 1]! !== a1 ? s[i + 1]! - a1 : s[i + 2]! !== a2 ? s[i + 2]! - a2 : s[i + 3]! - a3;
}

function clz128(x0: number, x1: number, x2: number, x3: number): number {
  if (x0 !== 0) return Math.clz32(x0);
  if (x1 !== 0) return 32 + Math.clz32(x1);
  if (x2 !== 0) return 64 + Math.clz32(x2);
  return 96 + Math.clz32(x3);
}

/**
 * Collects ranges in ascending, non-overlapping order (as a tree walk of a MaxMind DB emits them)
 * and builds a table: gaps become id 0 and equal neighbours merge.
 * @throws Error when a range starts below the end of the previous one.
 */
export class RangeBuilder4 {
  private readonly starts = new GrowableU32();
  private readonly ids = new GrowableU32();
  private nextFree = 0;

  /** Adds `[start, end]` (inclusive, unsigned 32-bit) with a location id. */
  add(start: number, end: number, id: number): void {
    if (start < this.nextFree) throw new Error(`IPv4 range starting at ${start} overlaps or is out of order`);
    if (start > this.nextFree) this.push(this.nextFree, 0);
    this.push(start, id);
    this.nextFree = end + 1;
  }

  private push(start: number, id: number): void {
    if (this.ids.length > 0 && this.ids.last() === id) return;
    this.starts.push(start);
    this.ids.push(id);
  }

  build(): RangeTable4 {
    if (this.nextFree < TWO_32) this.push(this.nextFree, 0);
    return new RangeTable4(this.starts.toArray(), this.ids.toArray());
  }
}

/** The IPv6 counterpart of {@link RangeBuilder4}; addresses as four 32-bit words. */
export class RangeBuilder6 {
  private readonly starts = new GrowableU32();
  private readonly ids = new GrowableU32();
  private free: [number, number, number, number] | null = [0, 0, 0, 0];

  /** Adds `[start, end]` (inclusive) with a location id; `end` may be the last address. */
  add(start: readonly number[], end: readonly number[], id: number): void {
    const free = this.free;
    if (free === null || compareWords(start, free) < 0) throw new Error('IPv6 range overlaps or is out of order');
    if (compareWords(start, free) > 0) this.push(free, 0);
    this.push(start, id);
    this.free = increment(end);
  }

  private push(start: readonly number[], id: number): void {
    if (this.ids.length > 0 && this.ids.last() === id) return;
    for (let i = 0; i < 4; i++) this.starts.push(start[i]!);
    this.ids.push(id);
  }

  build(): RangeTable6 {
    if (this.free !== null) this.push(this.free, 0);
    return new RangeTable6(this.starts.toArray(), this.ids.toArray());
  }
}

function compareWords(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** The next 128-bit address, or null past the end of the space. */
function increment(w: readonly number[]): [number, number, number, number] | null {
  const out: [number, number, number, number] = [w[0]!, w[1]!, w[2]!, w[3]!];
  for (let i = 3; i >= 0; i--) {
    if (out[i] !== 0xffffffff) {
      out[i] = out[i]! + 1;
      return out;
    }
    out[i] = 0;
  }
  return null;
}

/** An append-only Uint32Array that doubles its capacity as it fills. */
class GrowableU32 {
  private data = new Uint32Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }

  last(): number {
    return this.data[this.length - 1]!;
  }

  toArray(): Uint32Array {
    return this.data.slice(0, this.length);
  }
}
