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
  private readonly counters = new Map<string, number>();
  private readonly smooth = new Map<string, SmoothWrrState>();

  /** Returns the counter for `key` and advances it (wrapping at 2^31). */
  next(key: string): number {
    const n = this.counters.get(key) ?? 0;
    this.counters.set(key, (n + 1) & 0x7fffffff);
    return n;
  }

  /** The smooth weighted round-robin state of `key` (created empty), for the algorithm to update in place. */
  smoothWrr(key: string): SmoothWrrState {
    let state = this.smooth.get(key);
    if (state === undefined) this.smooth.set(key, (state = { keys: [], current: [] }));
    return state;
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
