/**
 * Smooth weighted round-robin state of one (record, DC): the endpoint keys it was built for and
 * their current weights (nginx's `current_weight`).
 */
export interface SmoothWrrState {
  keys: readonly string[];
  current: number[];
}

/**
 * Rotation counters for round-robin style algorithms, keyed by a stable string (record, type and
 * data center), so that rotation really advances from one query to the next and survives
 * configuration reloads. It is the only state a selection writes.
 */
export class RotationStore {
  private readonly counters: Map<string, number>;
  private readonly smooth: Map<string, SmoothWrrState>;
  private readonly advances: boolean;

  constructor(counters = new Map<string, number>(), smooth = new Map<string, SmoothWrrState>(), advances = true) {
    this.counters = counters;
    this.smooth = smooth;
    this.advances = advances;
  }

  /** Returns the counter for `key` and advances it (wrapping at 2^31); a read-only view does not advance. */
  next(key: string): number {
    const n = this.counters.get(key) ?? 0;
    if (this.advances) this.counters.set(key, (n + 1) & 0x7fffffff);
    return n;
  }

  /**
   * The smooth weighted round-robin state of `key` (created empty), for the algorithm to update in
   * place. A read-only view hands out a copy, so the update is discarded.
   */
  smoothWrr(key: string): SmoothWrrState {
    let state = this.smooth.get(key);
    if (!this.advances) return state ? { keys: state.keys, current: [...state.current] } : { keys: [], current: [] };
    if (state === undefined) this.smooth.set(key, (state = { keys: [], current: [] }));
    return state;
  }

  /**
   * A view over the same state that reads without advancing it: for lookups that must see the
   * live rotation but are not answers (PowerDNS's packet-less zone lookups).
   */
  readOnlyView(): RotationStore {
    return new RotationStore(this.counters, this.smooth, false);
  }

  /** An independent copy, for what-if runs (/explain) that must not advance live rotation. */
  clone(): RotationStore {
    const copy = new RotationStore();
    for (const [k, v] of this.counters) copy.counters.set(k, v);
    for (const [k, v] of this.smooth) copy.smooth.set(k, { keys: v.keys, current: [...v.current] });
    return copy;
  }

  /** Number of keys held (bounded by records × data centers). */
  get size(): number {
    return this.counters.size + this.smooth.size;
  }
}
