/**
 * The client metric rows of the metric store (docs/PRODUCT.md §3): per client network, the latest sample of
 * every client metric for every data center, kept in flat typed arrays rather than objects.
 *
 * Why flat: a query for a client-metric record reads one network's metric for every data center.
 * With a Map of data centers per network, an array per (network, DC) and an object per sample, that
 * read chased four pointers per data center into memory spread over up to `maxNetworks` networks
 * (cache misses dominated resolve() for such records). Here a network's key (a number for IPv4 and
 * for IPv6 networks of at most 52 bits: {@link clientNetworkKey}) is found in an open-addressing
 * index of `[key, slot]` pairs, and the slot's values of one metric sit side by side in that
 * metric's column (`[slot][dc][value, atMs]`), so the data centers a query reads share a cache
 * line, and the lines a record's metric touches over all networks are that column only: about two
 * cache misses per query instead of a dozen, over a quarter of the memory. String keys (IPv6
 * networks longer than /52, rare) go through a Map. The garbage collector sees a few arrays
 * instead of ~10 objects per network.
 *
 * A missing sample has `atMs` NaN. Recency: a doubly linked list over slots in update order (a
 * write moves its network to the end), so the head is the least recently *updated* network; reads
 * never touch recency.
 */
export class ClientNetworkRows {
  /**
   * Numeric keys → slots: open addressing with linear probing over `[key, slot]` pairs (key NaN =
   * empty), at most half full, so a lookup usually reads one pair: one cache line before the row.
   */
  private index = new Float64Array(2 * MIN_INDEX).fill(NaN);
  /** 32 − log2(index positions): Fibonacci hashing keeps the top bits of the product. */
  private shift = 32 - Math.log2(MIN_INDEX);
  private numeric = 0;
  /** String keys (IPv6 networks longer than /52) → slots. */
  private readonly strings = new Map<string, number>();
  /** Update order: a doubly linked list over slots, least recently updated first. */
  private prev = new Int32Array(16);
  private next = new Int32Array(16);
  private head = -1;
  private tail = -1;
  /** The key of each held slot. */
  private readonly keys: (string | number)[] = [];
  /** Slots freed by evictions, reused before the high-water mark grows. */
  private readonly free: number[] = [];
  private highWater = 0;
  /** Per metric: `[value, atMs]` pairs by slot and data center. */
  private columns: Float64Array[];
  /** Doubles per slot in a column: data centers × 2. */
  private width: number;

  /** `metrics`: the client catalog's length; `dcs`: the number of known data centers. */
  constructor(
    readonly metrics: number,
    dcs: number,
  ) {
    this.width = dcs * 2;
    this.columns = emptyColumns(metrics, this.width * 16);
  }

  /** Networks held. */
  get size(): number {
    return this.numeric + this.strings.size;
  }

  /** The slot of a network, or −1 when none is held. */
  slotOf(key: string | number): number {
    if (typeof key === 'string') return this.strings.get(key) ?? -1;
    const index = this.index;
    const mask = (index.length >>> 1) - 1;
    for (let i = this.home(key); ; i = (i + 1) & mask) {
      const k = index[2 * i]!;
      if (k === key) return index[2 * i + 1]!;
      if (k !== k) return -1;
    }
  }

  /** Position of (slot, dc) in a {@link column}: the value there, `atMs` one after. */
  offset(slot: number, dc: number): number {
    return slot * this.width + dc * 2;
  }

  /** A metric's `[value, atMs]` pairs at {@link offset}; replaced when it grows. */
  column(metric: number): Float64Array {
    return this.columns[metric]!;
  }

  /**
   * The slot of a network about to be written, created empty when new; the network becomes the
   * most recently updated.
   */
  touch(key: string | number): number {
    let slot = this.slotOf(key);
    if (slot >= 0) {
      this.unlink(slot);
      this.append(slot);
      return slot;
    }
    slot = this.free.pop() ?? this.highWater++;
    const end = (slot + 1) * this.width;
    for (let m = 0; m < this.metrics; m++) {
      let c = this.columns[m]!;
      if (end > c.length) {
        const grown = new Float64Array(Math.max(end, c.length * 2));
        grown.set(c);
        this.columns[m] = c = grown;
      }
      c.fill(NaN, slot * this.width, end);
    }
    if (slot >= this.next.length) {
      this.prev = grownInts(this.prev);
      this.next = grownInts(this.next);
    }
    this.keys[slot] = key;
    if (typeof key === 'string') this.strings.set(key, slot);
    else this.insert(key, slot);
    this.append(slot);
    return slot;
  }

  /** Writes one sample (`atMs` in ms since the epoch). */
  write(slot: number, metric: number, dc: number, value: number, atMs: number): void {
    const c = this.columns[metric]!;
    const i = this.offset(slot, dc);
    c[i] = value;
    c[i + 1] = atMs;
  }

  /** Evicts the least recently updated networks until at most `max` remain; returns how many went. */
  evictTo(max: number): number {
    let evicted = 0;
    while (this.size > max) {
      const slot = this.head;
      const key = this.keys[slot]!;
      this.unlink(slot);
      if (typeof key === 'string') this.strings.delete(key);
      else this.remove(key);
      this.free.push(slot);
      evicted++;
    }
    return evicted;
  }

  clear(): void {
    this.index = new Float64Array(2 * MIN_INDEX).fill(NaN);
    this.shift = 32 - Math.log2(MIN_INDEX);
    this.numeric = 0;
    this.strings.clear();
    this.keys.length = 0;
    this.head = this.tail = -1;
    this.free.length = 0;
    this.highWater = 0;
  }

  /**
   * Re-lays the rows out for a new data center list: `from[d]` is the old index of new data
   * center `d`, or −1 when it is new. Columns of removed data centers are dropped, and networks
   * left without any sample are forgotten. Keeps update order.
   */
  reshape(from: readonly number[]): void {
    const oldWidth = this.width;
    const old = this.columns;
    const entries: [string | number, number][] = [];
    for (let slot = this.head; slot >= 0; slot = this.next[slot]!) entries.push([this.keys[slot]!, slot]);
    this.width = from.length * 2;
    this.columns = emptyColumns(this.metrics, this.width * Math.max(16, entries.length));
    this.clear();
    const atOf = (m: number, slot: number, o: number): number => old[m]![slot * oldWidth + o * 2 + 1]!;
    for (const [key, oldSlot] of entries) {
      if (!old.some((_, m) => from.some((o) => o >= 0 && !Number.isNaN(atOf(m, oldSlot, o))))) continue;
      const slot = this.touch(key);
      for (let m = 0; m < this.metrics; m++) {
        for (let d = 0; d < from.length; d++) {
          const o = from[d]!;
          if (o >= 0) this.write(slot, m, d, old[m]![oldSlot * oldWidth + o * 2]!, atOf(m, oldSlot, o));
        }
      }
    }
  }

  /** Index position where a numeric key's probe starts. */
  private home(key: number): number {
    const lo = key >>> 0;
    const hi = Math.floor(key / 0x1_0000_0000);
    return Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1) >>> this.shift;
  }

  private insert(key: number, slot: number): void {
    if (2 * (this.numeric + 1) > this.index.length >>> 1) this.rehash();
    const index = this.index;
    const mask = (index.length >>> 1) - 1;
    let i = this.home(key);
    while (index[2 * i] === index[2 * i]) i = (i + 1) & mask;
    index[2 * i] = key;
    index[2 * i + 1] = slot;
    this.numeric++;
  }

  /** Removes a held numeric key, shifting later entries of its probe run back (no tombstones). */
  private remove(key: number): void {
    const index = this.index;
    const mask = (index.length >>> 1) - 1;
    let hole = this.home(key);
    while (index[2 * hole] !== key) hole = (hole + 1) & mask;
    for (let j = (hole + 1) & mask; index[2 * j] === index[2 * j]; j = (j + 1) & mask) {
      const h = this.home(index[2 * j]!);
      // An entry may fill the hole unless its probe starts in the cyclic range (hole, j].
      const reachable = hole < j ? hole < h && h <= j : hole < h || h <= j;
      if (reachable) continue;
      index[2 * hole] = index[2 * j]!;
      index[2 * hole + 1] = index[2 * j + 1]!;
      hole = j;
    }
    index[2 * hole] = NaN;
    this.numeric--;
  }

  /** Doubles the index (positions stay a power of two). */
  private rehash(): void {
    const old = this.index;
    this.index = new Float64Array(2 * old.length).fill(NaN);
    this.shift--;
    this.numeric = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i] === old[i]) this.insert(old[i]!, old[i + 1]!);
  }

  private unlink(slot: number): void {
    const p = this.prev[slot]!;
    const n = this.next[slot]!;
    if (p >= 0) this.next[p] = n;
    else this.head = n;
    if (n >= 0) this.prev[n] = p;
    else this.tail = p;
  }

  private append(slot: number): void {
    this.prev[slot] = this.tail;
    this.next[slot] = -1;
    if (this.tail >= 0) this.next[this.tail] = slot;
    else this.head = slot;
    this.tail = slot;
  }
}

/** Index positions of an empty table (a power of two). */
const MIN_INDEX = 64;

function grownInts(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(a.length * 2);
  grown.set(a);
  return grown;
}

/** One column per metric, every pair empty (NaN). */
function emptyColumns(metrics: number, length: number): Float64Array[] {
  return Array.from({ length: metrics }, () => new Float64Array(length).fill(NaN));
}
