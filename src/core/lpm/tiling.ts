/**
 * Range tilings of an address family and the operations that build them from location sources.
 *
 * A tiling covers the whole space of a family with ranges `[start[i], start[i+1] - 1]`, each with
 * a value (a location id; 0 = unknown), neighbours with equal values merged. IPv4 starts are one
 * 32-bit word, IPv6 starts four words (most significant first), the layout of `RangeTable4/6` and
 * of the compiled file.
 *
 * Sources whose entries overlap (a NetScaler file listing 10.0.0.0/8 and 10.1.0.0/16, custom
 * entries) are resolved by {@link resolveEntries}: the most specific entry (the smallest range)
 * wins wherever entries overlap, whatever their order in the file; equal ranges → the later one.
 */
export interface Tiling {
  readonly starts: Uint32Array;
  readonly ids: Uint32Array;
}

/** An address range with a value; `start`/`end` inclusive, as bigint (IPv4 below 2^32). */
export interface RangeEntry {
  readonly start: bigint;
  readonly end: bigint;
  readonly value: number;
}

export type Family = 4 | 6;

const SPACE_END: Record<Family, bigint> = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n };

/** Last address of a family as bigint. */
export function lastAddress(family: Family): bigint {
  return SPACE_END[family];
}

/** Appends ranges in ascending order and merges equal neighbours. */
export class TilingBuilder {
  private readonly stride: number;
  private starts: Uint32Array;
  private ids: Uint32Array = new Uint32Array(1024);
  private n = 0;

  constructor(readonly family: Family) {
    this.stride = family === 4 ? 1 : 4;
    this.starts = new Uint32Array(1024 * this.stride);
  }

  /** Adds a range starting at `start` (words) with a value; starts must ascend. */
  pushWords(w0: number, w1: number, w2: number, w3: number, value: number): void {
    if (this.n > 0 && this.ids[this.n - 1] === value) return;
    if (this.n === this.ids.length) {
      const ids = new Uint32Array(this.n * 2);
      ids.set(this.ids);
      this.ids = ids;
      const starts = new Uint32Array(this.n * 2 * this.stride);
      starts.set(this.starts);
      this.starts = starts;
    }
    const b = this.n * this.stride;
    this.starts[b] = w0;
    if (this.stride === 4) {
      this.starts[b + 1] = w1;
      this.starts[b + 2] = w2;
      this.starts[b + 3] = w3;
    }
    this.ids[this.n++] = value;
  }

  /** Adds a range starting at a bigint address. */
  push(start: bigint, value: number): void {
    if (this.stride === 1) this.pushWords(Number(start), 0, 0, 0, value);
    else this.pushWords(word(start, 0), word(start, 1), word(start, 2), word(start, 3), value);
  }

  build(): Tiling {
    if (this.n === 0) this.pushWords(0, 0, 0, 0, 0);
    return { starts: this.starts.slice(0, this.n * this.stride), ids: this.ids.slice(0, this.n) };
  }
}

function word(a: bigint, i: number): number {
  return Number((a >> BigInt(96 - 32 * i)) & 0xffffffffn);
}

/** The start of range `i` of a tiling as a bigint. */
export function startOf(t: Tiling, family: Family, i: number): bigint {
  if (family === 4) return BigInt(t.starts[i]!);
  const b = i * 4;
  return (BigInt(t.starts[b]!) << 96n) | (BigInt(t.starts[b + 1]!) << 64n) | (BigInt(t.starts[b + 2]!) << 32n) | BigInt(t.starts[b + 3]!);
}

/**
 * Resolves possibly overlapping entries into a tiling (value 0 where no entry covers an address):
 * the smallest covering entry wins; between equal-sized entries, the later one. Entries that are
 * already ascending and disjoint (the usual database file) take a linear path.
 */
export function resolveEntries(family: Family, entries: readonly RangeEntry[]): Tiling {
  const out = new TilingBuilder(family);
  if (isAscendingDisjoint(entries)) {
    let free = 0n;
    for (const e of entries) {
      if (e.start > free) out.push(free, 0);
      out.push(e.start, e.value);
      free = e.end + 1n;
    }
    if (free <= SPACE_END[family]) out.push(free, 0);
    return out.build();
  }
  // Sweep over boundaries with a heap of the active entries, the winner on top; entries that have
  // ended are dropped lazily when they surface.
  const order = entries.map((_, i) => i).sort((a, b) => cmp(entries[a]!.start, entries[b]!.start));
  const heap = new EntryHeap(entries);
  const ends: bigint[] = [];
  for (const e of entries) ends.push(e.end + 1n);
  const boundaries = [...new Set([0n, ...entries.map((e) => e.start), ...ends])].filter((b) => b <= SPACE_END[family]).sort(cmp);
  let next = 0;
  for (const b of boundaries) {
    while (next < order.length && entries[order[next]!]!.start <= b) heap.push(order[next++]!);
    while (heap.size > 0 && entries[heap.top()]!.end < b) heap.pop();
    out.push(b, heap.size > 0 ? entries[heap.top()]!.value : 0);
  }
  return out.build();
}

function isAscendingDisjoint(entries: readonly RangeEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) if (entries[i]!.start <= entries[i - 1]!.end) return false;
  return true;
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Max-heap of entry indexes: smaller range first, then later entry. */
class EntryHeap {
  private readonly items: number[] = [];

  constructor(private readonly entries: readonly RangeEntry[]) {}

  get size(): number {
    return this.items.length;
  }

  top(): number {
    return this.items[0]!;
  }

  private better(a: number, b: number): boolean {
    const ea = this.entries[a]!;
    const eb = this.entries[b]!;
    const sa = ea.end - ea.start;
    const sb = eb.end - eb.start;
    return sa !== sb ? sa < sb : a > b;
  }

  push(i: number): void {
    const h = this.items;
    h.push(i);
    let c = h.length - 1;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (!this.better(h[c]!, h[p]!)) break;
      [h[c], h[p]] = [h[p]!, h[c]!];
      c = p;
    }
  }

  pop(): void {
    const h = this.items;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let p = 0;
    for (;;) {
      const l = 2 * p + 1;
      const r = l + 1;
      let best = p;
      if (l < h.length && this.better(h[l]!, h[best]!)) best = l;
      if (r < h.length && this.better(h[r]!, h[best]!)) best = r;
      if (best === p) break;
      [h[p], h[best]] = [h[best]!, h[p]!];
      p = best;
    }
  }
}

/**
 * Combines two tilings of the same family range by range: the result has a boundary wherever
 * either input has one, with value `combine(a, b)`; equal neighbours merge. Linear in the total
 * number of ranges.
 */
export function joinTilings(family: Family, a: Tiling, b: Tiling, combine: (va: number, vb: number) => number): Tiling {
  const stride = family === 4 ? 1 : 4;
  const out = new TilingBuilder(family);
  let i = 0;
  let j = 0;
  const na = a.ids.length;
  const nb = b.ids.length;
  // Both start at address 0; step to whichever next boundary is lower (both when equal).
  for (;;) {
    const from = compareStarts(a.starts, i, b.starts, j, stride) >= 0 ? a.starts : b.starts;
    const at = from === a.starts ? i : j;
    out.pushWords(from[at * stride]!, from[at * stride + 1] ?? 0, from[at * stride + 2] ?? 0, from[at * stride + 3] ?? 0, combine(a.ids[i]!, b.ids[j]!));
    const hasA = i + 1 < na;
    const hasB = j + 1 < nb;
    if (!hasA && !hasB) break;
    const c = !hasA ? 1 : !hasB ? -1 : compareStarts(a.starts, i + 1, b.starts, j + 1, stride);
    if (c <= 0) i++;
    if (c >= 0) j++;
  }
  return out.build();
}

function compareStarts(sa: Uint32Array, i: number, sb: Uint32Array, j: number, stride: number): number {
  for (let w = 0; w < stride; w++) {
    const d = sa[i * stride + w]! - sb[j * stride + w]!;
    if (d !== 0) return d;
  }
  return 0;
}
