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
  /**
   * The named stream (`agents.probeRequests`); the same name always gives the same stream. The
   * first call's `maxLength` bounds it (default {@link DEFAULT_STREAM_LENGTH}).
   */
  stream<V>(name: string, options?: StreamOptions): StateStream<V>;
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

/** Bound of a {@link StateStream}. */
export interface StreamOptions {
  /** Entries kept at most; appending beyond drops the oldest (Redis `XADD … MAXLEN`). */
  readonly maxLength?: number;
}

/** Entries a stream keeps when its creator names no bound. */
export const DEFAULT_STREAM_LENGTH = 10_000;

/** One entry of a {@link StateStream}. */
export interface StreamEntry<V> {
  /** Increasing within the stream (`<sequence>`; a shared store uses its own ids, e.g. Redis's `<ms>-<seq>`). */
  readonly id: string;
  readonly value: V;
}

/**
 * An append-only, bounded log read by **consumer groups**: every group is given every entry once
 * (at most once: an entry handed to one reader of the group is not handed to another), and groups
 * read independently of each other. This is the shape of a work queue that several kinds of
 * workers each must see whole — the probe-request queue, read once per data center or proximity
 * zone by whichever of its agents asks first — and maps one to one onto Redis Streams (`XADD
 * MAXLEN`, `XREADGROUP … >` with `NOACK`, a group created at its first read from the oldest entry
 * kept), which is how a shared store implements it: then the readers of one group may ask any
 * node, and the store hands each entry to one of them. Values are plain JSON data.
 *
 * Reads are asynchronous because a shared store must ask the store which entries a group has not
 * been given (no node may decide that alone); appends are not: a shared store sends them in the
 * background (off the query path), keeping at most the bound while it is unreachable.
 */
export interface StateStream<V> {
  /** Appends `value`; the oldest entries beyond the bound are dropped and the watchers told (a shared store: once the store holds it). */
  append(value: V): void;
  /**
   * Up to `count` entries `group` has not been given yet, oldest first, now counted as given to
   * it. A group read for the first time starts at the oldest entry kept. A shared store that is
   * unreachable gives none (resolves `[]`; never rejects).
   */
  read(group: string, count: number): Promise<StreamEntry<V>[]>;
  /** Entries kept now (a shared store: as of its last exchange with the store). */
  readonly length: number;
  /** Entries kept that `group` has not been given yet (all of them for a group never read); 0 when a shared store is unreachable. */
  backlog(group: string): Promise<number>;
  /** Calls `listener` after every append, this node's or (shared store) another's: a long-polling reader wakes up. Returns the function that stops the calls. */
  watch(listener: (entry: StreamEntry<V>) => void): () => void;
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

/**
 * The embedded {@link StateStore}: maps and streams in this process; watchers run synchronously,
 * in subscription order, inside the call that changed the data (so every method stays synchronous).
 */
export class InProcessStateStore implements StateStore {
  readonly node = 'local';
  private readonly maps = new Map<string, InProcessMap<unknown>>();
  private readonly streams = new Map<string, InProcessStream<unknown>>();

  map<V>(name: string, options: MapOptions = {}): StateMap<V> {
    let m = this.maps.get(name);
    if (!m) this.maps.set(name, (m = new InProcessMap(options.ttlMs)));
    return m as InProcessMap<V>;
  }

  connection(): StoreConnection {
    return EMBEDDED;
  }

  stream<V>(name: string, options: StreamOptions = {}): StateStream<V> {
    let s = this.streams.get(name);
    if (!s) this.streams.set(name, (s = new InProcessStream(options.maxLength ?? DEFAULT_STREAM_LENGTH)));
    return s as InProcessStream<V>;
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

/**
 * A bounded stream in this process: entries in an array with the sequence number of the first,
 * and one cursor (the next sequence number to give) per group. Trimming moves the first sequence
 * number; a cursor behind it reads from the oldest entry kept.
 */
class InProcessStream<V> implements StateStream<V> {
  private entries: StreamEntry<V>[] = [];
  /** Sequence number of `entries[0]`. */
  private first = 0;
  private readonly cursors = new Map<string, number>();
  private readonly listeners = new Set<(entry: StreamEntry<V>) => void>();

  constructor(private readonly maxLength: number) {
    if (!(maxLength >= 1)) throw new RangeError(`a stream keeps at least one entry (maxLength ${maxLength})`);
  }

  get length(): number {
    return Math.min(this.entries.length, this.maxLength);
  }

  append(value: V): void {
    const entry = { id: String(this.first + this.entries.length), value };
    this.entries.push(entry);
    const excess = this.entries.length - this.maxLength;
    // Dropped in chunks so a full stream does not shift its array on every append.
    if (excess > 0 && (excess >= 1024 || excess * 8 >= this.maxLength)) {
      this.entries = this.entries.slice(excess);
      this.first += excess;
    }
    for (const l of this.listeners) l(entry);
  }

  read(group: string, count: number): Promise<StreamEntry<V>[]> {
    const start = Math.max(this.cursors.get(group) ?? 0, this.oldest());
    const end = Math.min(start + Math.max(0, count), this.first + this.entries.length);
    this.cursors.set(group, end);
    return Promise.resolve(this.entries.slice(start - this.first, end - this.first));
  }

  backlog(group: string): Promise<number> {
    return Promise.resolve(this.first + this.entries.length - Math.max(this.cursors.get(group) ?? 0, this.oldest()));
  }

  watch(listener: (entry: StreamEntry<V>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sequence number of the oldest entry within the bound (entries beyond it may still sit in the array until the next chunked trim). */
  private oldest(): number {
    return this.first + Math.max(0, this.entries.length - this.maxLength);
  }
}
