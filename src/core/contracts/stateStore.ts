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
  /** The named map (`health.overrides`, `steering.host`, …); the same name always gives the same map. */
  map<V>(name: string): StateMap<V>;
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
  private readonly maps = new Map<string, InProcessMap<unknown>>();

  map<V>(name: string): StateMap<V> {
    let m = this.maps.get(name);
    if (!m) this.maps.set(name, (m = new InProcessMap()));
    return m as InProcessMap<V>;
  }
}

class InProcessMap<V> implements StateMap<V> {
  private readonly values = new Map<string, V>();
  private readonly listeners = new Set<(key: string, value: V | undefined) => void>();

  get size(): number {
    return this.values.size;
  }

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  set(key: string, value: V): void {
    this.values.set(key, value);
    for (const l of this.listeners) l(key, value);
  }

  delete(key: string): boolean {
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
