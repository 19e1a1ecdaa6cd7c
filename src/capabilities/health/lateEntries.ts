/**
 * Entries of a shared, expiring map whose writer may only be late: an entry that left the map
 * (its TTL ran out in the store, or a reload no longer held it) is still counted for a while after
 * this node saw it go, and stops counting only when it has stayed away that long. A slowed node (a
 * starved event loop, a slow store write) or a store that stalled and then swept every key at once
 * so costs nothing while its refresh is merely late; a node that is gone stops counting after the
 * store's TTL plus the linger (quorum.ts, src/capabilities/health/README.md "late votes").
 */
export class LateEntries {
  /** Key → when (ms, this node's monotonic clock) it was seen to leave. */
  private readonly since = new Map<string, number>();

  /** Notes that `key` left the map at `nowMs` (the first time counts: a second removal does not extend it). */
  left(key: string, nowMs: number): void {
    if (!this.since.has(key)) this.since.set(key, nowMs);
  }

  /** `key` was written again: it counts as present. Returns whether it had been late. */
  back(key: string): boolean {
    return this.since.delete(key);
  }

  /** Whether `key` left and still lingers. */
  has(key: string): boolean {
    return this.since.has(key);
  }

  /** How many keys linger now. */
  get size(): number {
    return this.since.size;
  }

  /** The keys that linger now. */
  keys(): IterableIterator<string> {
    return this.since.keys();
  }

  /** Forgets and returns the keys that left `lingerMs` or more before `nowMs`. */
  expire(nowMs: number, lingerMs: number): string[] {
    const out: string[] = [];
    for (const [key, at] of this.since)
      if (nowMs - at >= lingerMs) {
        this.since.delete(key);
        out.push(key);
      }
    return out;
  }
}
