import type { ZoneIndexReading } from '../../core/views/proximityView.js';

/**
 * The engine's ordered zone index cache (docs/PRODUCT.md §5; the seed's step 5a: PDNS-0 "first
 * searches its cache for a previously saved ordered zone index"): per client network, the index
 * the PDB gave, for `ttlMs`; at most `maxSize` networks, the least recently used dropped first.
 * Local to this engine, as each PDNS has its own cache: the PDB behind it is what engines share.
 * Keys are the client network's number (`clientNetworkKey`) or its text: no string is built for a
 * hit on the configured lengths.
 */
export class ZoneIndexCache {
  private readonly entries = new Map<number | string, { readonly reading: ZoneIndexReading; readonly expiresAtMs: number }>();
  hits = 0;
  misses = 0;

  constructor(
    private ttlMs: number,
    private maxSize: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** New bounds; entries beyond `maxSize` go now (oldest use first). */
  resize(ttlMs: number, maxSize: number): void {
    this.ttlMs = ttlMs;
    this.maxSize = maxSize;
    this.trim();
  }

  /** The cached reading of `key` at `nowMs`, or undefined (absent or expired; an expired one is dropped). */
  get(key: number | string, nowMs: number, count: boolean): ZoneIndexReading | undefined {
    const e = this.entries.get(key);
    if (e === undefined || e.expiresAtMs <= nowMs) {
      if (e !== undefined && count) this.entries.delete(key);
      if (count) this.misses++;
      return undefined;
    }
    if (count) {
      this.hits++;
      // Moved to the end: the map's order is use order.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e.reading;
  }

  /** Caches `reading` for `key` from `nowMs` for the TTL. */
  set(key: number | string, reading: ZoneIndexReading, nowMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { reading, expiresAtMs: nowMs + this.ttlMs });
    this.trim();
  }

  clear(): void {
    this.entries.clear();
  }

  private trim(): void {
    while (this.entries.size > this.maxSize) this.entries.delete(this.entries.keys().next().value!);
  }
}
