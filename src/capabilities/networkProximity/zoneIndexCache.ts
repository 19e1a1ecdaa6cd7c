import type { PdbKey } from './proximityDatabase.js';

/** Interned orders beyond this count empty the cache (its order ids are 16-bit). */
const MAX_ORDERS = 0xffff;

/**
 * The engine's ordered zone index cache (docs/PRODUCT.md §5; the seed's step 5a: PDNS-0 "first
 * searches its cache for a previously saved ordered zone index"): per client network, the index
 * the PDB gave, for `ttlMs`; at most `maxSize` networks, the least recently used dropped first (second-chance approximation, {@link trim}).
 * Local to this engine, as each PDNS has its own cache: the PDB behind it is what engines share.
 *
 * Compact (README.md, "Memory"): a network is one `Map` entry (its numeric PDB key → a slot) and,
 * per slot, an expiry time, an order id and a measured flag in typed arrays; orders (zone-id
 * lists) are interned, so every network with the same order shares one array, and the query path
 * allocates nothing on a hit.
 */
export class ZoneIndexCache {
  private readonly slots = new Map<PdbKey, number>();
  private free: number[] = [];
  private top = 0;
  private expires = new Float64Array(0);
  private orderIds = new Uint16Array(0);
  private measuredFlags = new Uint8Array(0);
  /** Second-chance bits: set by a hit, cleared when the bound passes the entry over. */
  private used = new Uint8Array(0);
  private orders: (readonly string[])[] = [];
  private orderIdOf = new Map<string, number>();
  hits = 0;
  misses = 0;

  constructor(
    private ttlMs: number,
    private maxSize: number,
  ) {}

  get size(): number {
    return this.slots.size;
  }

  /** New bounds; entries beyond `maxSize` go now (oldest use first). */
  resize(ttlMs: number, maxSize: number): void {
    this.ttlMs = ttlMs;
    this.maxSize = maxSize;
    this.trim();
  }

  /**
   * The slot of `key`'s cached index at `nowMs`, or -1 (absent or expired). With `count` (a query,
   * not `/explain`) it counts the hit or miss, moves a hit to the most recently used end and drops
   * an expired entry. Read the index with {@link orderAt} and {@link measuredAt}.
   */
  get(key: PdbKey, nowMs: number, count: boolean): number {
    const slot = this.slots.get(key);
    if (slot === undefined || this.expires[slot]! <= nowMs) {
      if (slot !== undefined && count) this.drop(key, slot);
      if (count) this.misses++;
      return -1;
    }
    if (count) {
      this.hits++;
      this.used[slot] = 1;
    }
    return slot;
  }

  /**
   * As {@link get}, but a miss is neither counted nor drops an expired entry (the {@link get} of the
   * query's full lookup that follows does both); with `count` a hit is counted and marked used.
   * The decision cache's per-query read of the index (`ProximityView.cachedIndex`).
   */
  peek(key: PdbKey, nowMs: number, count: boolean): number {
    const slot = this.slots.get(key);
    if (slot === undefined || this.expires[slot]! <= nowMs) return -1;
    if (count) {
      this.hits++;
      this.used[slot] = 1;
    }
    return slot;
  }

  /** The interned zone order of a slot {@link get} or {@link peek} returned. */
  orderAt(slot: number): readonly string[] {
    return this.orders[this.orderIds[slot]!]!;
  }

  /** Whether the order of a slot {@link get} returned came from measurements. */
  measuredAt(slot: number): boolean {
    return this.measuredFlags[slot] === 1;
  }

  /** Caches `order` (measured or the fallback) for `key` from `nowMs` for the TTL; returns the interned order. */
  set(key: PdbKey, order: readonly string[], measured: boolean, nowMs: number): readonly string[] {
    const id = this.intern(order);
    let slot = this.slots.get(key);
    if (slot !== undefined) this.slots.delete(key);
    else slot = this.newSlot();
    this.slots.set(key, slot);
    this.expires[slot] = nowMs + this.ttlMs;
    this.orderIds[slot] = id;
    this.measuredFlags[slot] = measured ? 1 : 0;
    this.used[slot] = 0;
    this.trim();
    return this.orders[id]!;
  }

  clear(): void {
    this.slots.clear();
    this.free = [];
    this.top = 0;
    this.orders = [];
    this.orderIdOf = new Map();
  }

  private intern(order: readonly string[]): number {
    const text = order.join('\n');
    let id = this.orderIdOf.get(text);
    if (id !== undefined) return id;
    if (this.orders.length >= MAX_ORDERS) this.clear();
    id = this.orders.length;
    this.orders.push(Object.freeze([...order]));
    this.orderIdOf.set(text, id);
    return id;
  }

  private newSlot(): number {
    const free = this.free.pop();
    if (free !== undefined) return free;
    if (this.top === this.expires.length) {
      const cap = Math.max(1024, this.expires.length * 2);
      const expires = new Float64Array(cap);
      expires.set(this.expires);
      const orderIds = new Uint16Array(cap);
      orderIds.set(this.orderIds);
      const measured = new Uint8Array(cap);
      measured.set(this.measuredFlags);
      const used = new Uint8Array(cap);
      used.set(this.used);
      this.used = used;
      this.expires = expires;
      this.orderIds = orderIds;
      this.measuredFlags = measured;
    }
    return this.top++;
  }

  private drop(key: PdbKey, slot: number): void {
    this.slots.delete(key);
    this.free.push(slot);
  }

  /**
   * Drops entries beyond `maxSize`, least recently used first, by the second-chance (clock)
   * approximation of LRU: the map's order is insertion order; an entry hit since it was inserted
   * or last passed over moves to the end once instead of on every hit (a `Map` delete and insert
   * per hit was the cache's largest cost in the profile).
   */
  private trim(): void {
    let passes = this.slots.size;
    while (this.slots.size > this.maxSize) {
      const key = this.slots.keys().next().value!;
      const slot = this.slots.get(key)!;
      if (this.used[slot] === 1 && passes-- > 0) {
        this.used[slot] = 0;
        this.slots.delete(key);
        this.slots.set(key, slot);
      } else this.drop(key, slot);
    }
  }
}
