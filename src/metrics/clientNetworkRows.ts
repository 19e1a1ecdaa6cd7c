/**
 * The client metric rows of the metric store (SPEC §3): per client network, the latest sample of
 * every client metric for every data center, kept in one flat `Float64Array` rather than objects.
 *
 * Why flat: a query for a client-metric record reads one network's metric for every data center.
 * With a Map of data centers per network, an array per (network, DC) and an object per sample, that
 * read chased four pointers per data center into memory spread over up to `maxNetworks` networks
 * (cache misses dominated resolve() for such records). Here a network is one Map lookup (a number
 * key for IPv4 and for IPv6 networks of at most 52 bits: {@link clientNetworkKey}) giving a slot,
 * and the slot's values sit side by side: `[metric][dc][value, atMs]`, so the data centers of one
 * metric share a cache line. The garbage collector sees a few arrays instead of ~10 objects per
 * network (≈ 200 bytes per network with three data centers, against ≈ 1 KiB as objects).
 *
 * A missing sample has `atMs` NaN. Recency: the Map's insertion order is the update order (a write
 * moves its network to the end), so the first key is the least recently *updated* network; reads
 * never touch recency.
 */
export class ClientNetworkRows {
  /** Network key → slot; insertion order = update order. */
  private readonly slots = new Map<string | number, number>();
  /** Slots freed by evictions, reused before the high-water mark grows. */
  private readonly free: number[] = [];
  private highWater = 0;
  private data: Float64Array;
  /** Doubles per slot: metrics × data centers × 2. */
  private width: number;

  /** `metrics`: the client catalog's length; `dcs`: the number of known data centers. */
  constructor(
    readonly metrics: number,
    private dcs: number,
  ) {
    this.width = metrics * dcs * 2;
    this.data = new Float64Array(this.width * 16);
  }

  /** Networks held. */
  get size(): number {
    return this.slots.size;
  }

  /** The slot of a network, or −1 when none is held. */
  slotOf(key: string | number): number {
    const slot = this.slots.get(key);
    return slot === undefined ? -1 : slot;
  }

  /** Position of (metric, dc) of a slot in {@link values}: the value there, `atMs` one after. */
  offset(slot: number, metric: number, dc: number): number {
    return slot * this.width + (metric * this.dcs + dc) * 2;
  }

  /** The backing array (`[value, atMs]` pairs at {@link offset}); replaced when it grows. */
  get values(): Float64Array {
    return this.data;
  }

  /**
   * The slot of a network about to be written, created empty when new; the network becomes the
   * most recently updated.
   */
  touch(key: string | number): number {
    let slot = this.slots.get(key);
    if (slot !== undefined) {
      this.slots.delete(key);
      this.slots.set(key, slot);
      return slot;
    }
    slot = this.free.pop() ?? this.highWater++;
    const end = (slot + 1) * this.width;
    if (end > this.data.length) {
      const grown = new Float64Array(Math.max(end, this.data.length * 2));
      grown.set(this.data);
      this.data = grown;
    }
    this.data.fill(NaN, slot * this.width, end);
    this.slots.set(key, slot);
    return slot;
  }

  /** Writes one sample (`atMs` in ms since the epoch). */
  write(slot: number, metric: number, dc: number, value: number, atMs: number): void {
    const i = this.offset(slot, metric, dc);
    this.data[i] = value;
    this.data[i + 1] = atMs;
  }

  /** Evicts the least recently updated networks until at most `max` remain; returns how many went. */
  evictTo(max: number): number {
    let evicted = 0;
    for (const [key, slot] of this.slots) {
      if (this.slots.size <= max) break;
      this.slots.delete(key);
      this.free.push(slot);
      evicted++;
    }
    return evicted;
  }

  clear(): void {
    this.slots.clear();
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
    const oldDcs = this.dcs;
    const old = this.data;
    const entries = [...this.slots];
    this.dcs = from.length;
    this.width = this.metrics * this.dcs * 2;
    this.data = new Float64Array(Math.max(this.width, 1) * Math.max(16, entries.length));
    this.clear();
    for (const [key, oldSlot] of entries) {
      let any = false;
      for (let m = 0; m < this.metrics && !any; m++) {
        for (const o of from) if (o >= 0 && !Number.isNaN(old[oldSlot * oldWidth + (m * oldDcs + o) * 2 + 1]!)) any = true;
      }
      if (!any) continue;
      const slot = this.touch(key);
      for (let m = 0; m < this.metrics; m++) {
        for (let d = 0; d < from.length; d++) {
          const o = from[d]!;
          if (o < 0) continue;
          const src = oldSlot * oldWidth + (m * oldDcs + o) * 2;
          this.write(slot, m, d, old[src]!, old[src + 1]!);
        }
      }
    }
  }
}
