/**
 * Where the state that is written outside the query path lives: health observations, operator
 * overrides, pushed metrics. Capabilities write it and watch it; from what they see they build
 * the views the query path reads (`HealthView`, `MetricView`), so a query never touches the store.
 *
 * The embedded default is {@link InProcessStateStore}: plain maps in this process, watchers called
 * synchronously inside `set` and `delete`, so a write is in the views before the call returns (a
 * pushed metric or an override is seen by the very next query). A shared store (many engine
 * nodes, one truth) implements the same interface over an existing distributed store; its
 * watchers then also fire for writes of other nodes. Values are plain JSON data so they can
 * travel.
 */
export interface StateStore {
  /**
   * The named map (`health.overrides`, `steering.host`, …); the same name always gives the same
   * map (the first call's `options` apply).
   */
  map<V>(name: string, options?: MapOptions): StateMap<V>;
  /** This node's name among the nodes sharing the store (`local` for the embedded store). */
  readonly node: string;
  /** Whether the store is reachable now, and since when. */
  connection(): StoreConnection;
}

/** Options of a {@link StateMap}. */
export interface MapOptions {
  /**
   * Each key is removed this long (ms) after its last `set` (watchers are told with `undefined`).
   * A shared store counts with its own clock (Redis `TIME`), so node clocks never decide.
   */
  readonly ttlMs?: number;
}

/**
 * The state of a store's connection: `embedded` (in this process, always current), `connected`,
 * or `disconnected` (reads serve the last state seen; writes are sent on reconnection).
 */
export interface StoreConnection {
  readonly state: 'embedded' | 'connected' | 'disconnected';
  /** When the state began (ms, monotonic clock of this process). */
  readonly sinceMs: number;
}

/** One named map of a {@link StateStore}. */
export interface StateMap<V> {
  get(key: string): V | undefined;
  /** Stores `value` under `key` and tells the watchers. */
  set(key: string, value: V): void;
  /** Removes `key` (watchers are told with `undefined`); false when it was absent. */
  delete(key: string): boolean;
  entries(): IterableIterator<[string, V]>;
  readonly size: number;
  /**
   * Calls `listener` after every change of this map, with the new value (`undefined`: deleted).
   * Returns the function that stops the calls.
   */
  watch(listener: (key: string, value: V | undefined) => void): () => void;
}

/** The embedded {@link StateStore}: maps in this process; watchers run synchronously, in subscription order. */
export class InProcessStateStore implements StateStore {
  readonly node = 'local';
  private readonly maps = new Map<string, InProcessMap<unknown>>();

  map<V>(name: string, options: MapOptions = {}): StateMap<V> {
    let m = this.maps.get(name);
    if (!m) this.maps.set(name, (m = new InProcessMap(options.ttlMs)));
    return m as InProcessMap<V>;
  }

  connection(): StoreConnection {
    return EMBEDDED;
  }
}

const EMBEDDED: StoreConnection = { state: 'embedded', sinceMs: 0 };

class InProcessMap<V> implements StateMap<V> {
  private readonly values = new Map<string, V>();
  private readonly listeners = new Set<(key: string, value: V | undefined) => void>();
  /** Expiry timers by key (maps with a TTL only); unref'd so they never keep the process alive. */
  private readonly expiries = new Map<string, NodeJS.Timeout>();

  constructor(private readonly ttlMs: number | undefined) {}

  get size(): number {
    return this.values.size;
  }

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  set(key: string, value: V): void {
    this.values.set(key, value);
    if (this.ttlMs !== undefined) {
      clearTimeout(this.expiries.get(key));
      this.expiries.set(key, setTimeout(() => this.delete(key), this.ttlMs).unref());
    }
    for (const l of this.listeners) l(key, value);
  }

  delete(key: string): boolean {
    clearTimeout(this.expiries.get(key));
    this.expiries.delete(key);
    if (!this.values.delete(key)) return false;
    for (const l of this.listeners) l(key, undefined);
    return true;
  }

  entries(): IterableIterator<[string, V]> {
    return this.values.entries();
  }

  watch(listener: (key: string, value: V | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
