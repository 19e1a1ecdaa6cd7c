import type { Cluster, Redis } from 'ioredis';
import {
  DEFAULT_STREAM_LENGTH,
  type MapOptions,
  type StateMap,
  type StateStore,
  type StateStream,
  type StoreConnection,
  type StreamOptions,
} from '../../core/contracts/stateStore.js';
import { compareStreamIds, REDIS_SCRIPTS } from './redisScripts.js';
import { isCluster, type RedisClient } from './redisClient.js';
import { RedisStream } from './redisStream.js';

/** What a {@link RedisStateStore} needs. */
export interface RedisStateStoreOptions {
  /**
   * Opens a new connection (commands and the change-log reader each hold one; ioredis reconnects
   * with backoff and follows a Sentinel failover); `blockMs`: the longest blocking read it makes.
   */
  readonly connect: (blockMs: number) => RedisClient;
  /** This node's name, unique among the nodes sharing the store (written with every change; keys of per-node values). */
  readonly node: string;
  /** Prefix of every key, inside a Redis Cluster hash tag so all of them live in one slot (`{gslbd}`). */
  readonly namespace: string;
  /** Changes kept in the change log (`XADD … MAXLEN ~`); a node away longer than that many changes reloads every map. */
  readonly logLength: number;
  /** How long (ms) one read of the change log blocks before it asks again. */
  readonly blockMs?: number;
  /** Called on connection changes (logs and metrics). */
  readonly onConnection?: (connection: StoreConnection) => void;
  /** Called with the time (ms) each store operation took (metrics). */
  readonly onLatency?: (operation: string, ms: number) => void;
  /** Called with each error the Redis client reports (connection refused, authentication, TLS). */
  readonly onError?: (message: string) => void;
  /** Monotonic clock (ms); `performance.now` by default. */
  readonly monotonic?: () => number;
}

interface Pending {
  readonly map: string;
  readonly key: string;
}

/**
 * The shared {@link StateStore}: every map lives in Redis and in a replica in this process, which
 * is what every read — and so the query path — uses; nothing here ever waits on Redis.
 *
 * - `set` and `delete` change the replica and call the watchers at once (as the in-process store
 *   does), then mark the key dirty; a flusher writes the replica's current value of every dirty key
 *   with one script per key that changes the map's hash and appends the change to the namespace's
 *   change log (a Redis Stream) atomically, so the log's order is the hash's order.
 * - A reader connection follows the change log (`XREAD BLOCK`: no keyspace notifications, which
 *   managed Redis often turns off; a stream is one key, so it works in a Redis Cluster, unlike plain
 *   pub/sub) and applies other nodes' changes to the replica, calling watchers only for values that
 *   changed. A change older than this node's own pending or last write of the same key is ignored,
 *   so every node converges on the log's last value.
 * - Maps with a `ttlMs` keep an expiry per key in a sorted set scored with Redis's own `TIME`;
 *   every node sweeps expired keys through the same log (no node clock is involved).
 * - While Redis is unreachable the replica keeps serving, writes stay dirty (one per key: memory is
 *   bounded by the keys), and {@link connection} says since when. On reconnect the dirty keys are
 *   written first and every map is then reloaded; when the namespace's epoch key is missing or
 *   changed (Redis restarted without its data) the whole replica is written back.
 */
export class RedisStateStore implements StateStore {
  readonly node: string;
  private readonly maps = new Map<string, RedisMap<unknown>>();
  private readonly dirty = new Map<string, Pending>();
  /** Dirty keys that are a write-back of the replica after Redis lost its data, not a write of this node: written only where no other node wrote since. */
  private readonly republish = new Set<string>();
  private readonly commands: RedisClient;
  private reader: RedisClient | undefined;
  /** The reader connection's client id (`CLIENT ID`), to wake its blocking read (`CLIENT UNBLOCK`). */
  private readerId: number | undefined;
  /** In a Cluster: the node connection the reader's id was asked on (a new master after a failover is asked again). */
  private readerNode: Redis | undefined;
  /** In a Cluster: the slot of every key (`CLUSTER KEYSLOT` of the namespace's hash tag). */
  private slot: number | undefined;
  private readonly streams = new Map<string, RedisStream<unknown>>();
  private readonly keys: {
    readonly log: string;
    readonly epoch: string;
    readonly touched: string;
    hash(map: string): string;
    expiries(map: string): string;
    stream(name: string): string;
  };
  private lastLogId = '0-0';
  private epoch: string | undefined;
  private state: StoreConnection = { state: 'disconnected', sinceMs: 0 };
  private stopped = false;
  private flushing: Promise<void> | undefined;
  private syncing: Promise<void> | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly monotonic: () => number;
  private readonly blockMs: number;

  constructor(private readonly opts: RedisStateStoreOptions) {
    this.node = opts.node;
    this.monotonic = opts.monotonic ?? (() => performance.now());
    this.blockMs = opts.blockMs ?? 2000;
    this.state = { state: 'disconnected', sinceMs: this.monotonic() };
    const ns = opts.namespace;
    this.keys = {
      log: `${ns}:log`,
      epoch: `${ns}:epoch`,
      touched: `${ns}:touched`,
      hash: (m) => `${ns}:map:${m}`,
      expiries: (m) => `${ns}:ttl:${m}`,
      stream: (name) => `${ns}:stream:${name}`,
    };
    this.commands = opts.connect(0);
    this.commands.on('ready', () => void this.resync());
    this.commands.on('close', () => this.disconnected());
    this.commands.on('error', (e: Error) => {
      this.opts.onError?.(e.message);
      this.disconnected();
    });
    // A stopped or partitioned Redis keeps the socket open: only a timed-out PING tells.
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    // In a Cluster, each connection's slot table is asked for here rather than by ioredis's own
    // round (off in connectRedis): it follows a replica's promotion, and stops with the heartbeat.
    for (const client of [this.commands, this.reader]) if (client && isCluster(client) && client.status === 'ready') client.refreshSlotsCache();
    if (this.commands.status !== 'ready') return;
    const started = this.monotonic();
    try {
      // A keyed command: in a Cluster it goes to the master of the store's slot (a PING could reach any node).
      await this.commands.exists(this.keys.epoch);
      this.opts.onLatency?.('ping', this.monotonic() - started);
      if (this.state.state !== 'connected') await this.resync();
    } catch {
      this.disconnected();
    }
  }

  map<V>(name: string, options: MapOptions = {}): StateMap<V> {
    let m = this.maps.get(name);
    if (!m) {
      this.maps.set(name, (m = new RedisMap<unknown>(name, options.ttlMs, (key) => this.markDirty(name, key))));
      // A load that fails (a command timed out on a loaded machine or a stalled Redis) must not
      // reject unhandled — that ended the engine at start-up: the store turns disconnected, and the
      // heartbeat's resynchronisation reloads every map once Redis answers.
      if (this.state.state === 'connected') this.loadMap(m).catch(() => this.disconnected());
    }
    return m as RedisMap<V>;
  }

  connection(): StoreConnection {
    return this.state;
  }

  /** Keys written on this node and not yet in Redis (metrics). */
  get pendingWrites(): number {
    return this.dirty.size;
  }

  /** Each map's name and the keys of its replica (metrics). */
  replicaSizes(): [string, number][] {
    return [...this.maps.values()].map((m) => [m.name, m.size]);
  }

  /** A stream shared through a Redis Stream ({@link RedisStream}): a group's entries go to one reader on whichever node it asks. */
  stream<V>(name: string, options: StreamOptions = {}): StateStream<V> {
    let s = this.streams.get(name);
    if (!s) {
      s = new RedisStream<unknown>(this.keys.stream(name), options.maxLength ?? DEFAULT_STREAM_LENGTH, {
        commands: () => (this.state.state === 'connected' ? this.commands : undefined),
        node: this.node,
        onLatency: this.opts.onLatency,
        monotonic: this.monotonic,
      });
      this.streams.set(name, s);
      // Until this answers the reader follows it from `$` (new entries only); the next resync sets it anyway.
      // Then the reader is woken to follow it from that tail (waking it before would read from `$`
      // and race with the answer).
      if (this.state.state === 'connected')
        this.streamTail(s)
          .then(() => this.wakeReader())
          .catch(() => undefined);
    }
    return s as RedisStream<V>;
  }

  /** Resolves when the first synchronisation with Redis is done, or after `timeoutMs` (the engine starts either way). */
  async ready(timeoutMs: number): Promise<boolean> {
    const deadline = this.monotonic() + timeoutMs;
    while (this.state.state !== 'connected' && this.monotonic() < deadline) await sleep(20);
    if (this.syncing) await Promise.race([this.syncing, sleep(Math.max(0, deadline - this.monotonic()))]);
    return this.state.state === 'connected';
  }

  /** Resolves when every dirty key has been written (tests, orderly shutdown); false after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<boolean> {
    const deadline = this.monotonic() + timeoutMs;
    while (this.monotonic() < deadline) {
      if (this.dirty.size === 0 && !this.flushing && this.state.state === 'connected') return true;
      await sleep(10);
    }
    return false;
  }

  /** Closes both connections; the replica stays readable. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    clearInterval(this.heartbeat);
    await this.settled(500);
    this.reader?.disconnect();
    this.commands.disconnect();
  }

  private markDirty(map: string, key: string): void {
    this.republish.delete(`${map}\u0000${key}`);
    this.dirty.set(`${map}\u0000${key}`, { map, key });
    if (this.state.state === 'connected') this.flushSoon();
  }

  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.dirty.size > 0 && this.state.state === 'connected' && !this.stopped) this.flushSoon();
    });
  }

  /** Writes the replica's value of every dirty key; a key whose write fails stays dirty. */
  private async flush(): Promise<void> {
    // Yield once so a burst of writes in one tick goes out as one pipeline.
    await Promise.resolve();
    const batch = [...this.dirty.entries()];
    const republished = new Set<string>();
    for (const [id, p] of batch) {
      this.dirty.delete(id);
      if (this.republish.delete(id)) republished.add(id);
      this.maps.get(p.map)!.beginWrite(p.key);
    }
    const pipeline = this.commands.pipeline();
    for (const [id, { map, key }] of batch) {
      const m = this.maps.get(map)!;
      const value = m.get(key);
      // Both scripts change the same four keys (redisScripts.ts).
      const keys = [this.keys.hash(map), this.keys.expiries(map), this.keys.log, this.keys.touched];
      if (value === undefined) pipeline.eval(REDIS_SCRIPTS.delete, keys.length, ...keys, map, key, this.node, this.opts.logLength);
      else
        pipeline.eval(
          REDIS_SCRIPTS.set,
          keys.length,
          ...keys,
          map,
          key,
          JSON.stringify(value),
          this.node,
          this.opts.logLength,
          m.ttlMs ?? 0,
          republished.has(id) ? 1 : 0,
        );
    }
    const started = this.monotonic();
    const results = await pipeline.exec().catch(() => null);
    this.opts.onLatency?.('write', this.monotonic() - started);
    // A Cluster's master lost (or a command timed out) leaves the client ready: without this the
    // flusher would retry at once, forever; the heartbeat resynchronises once Redis answers again.
    if (!results || results.some(([err]) => err)) this.disconnected();
    batch.forEach(([id, p], i) => {
      const [err, logId] = results?.[i] ?? [new Error('not sent'), null];
      if (err && !this.dirty.has(id)) {
        this.dirty.set(id, p);
        if (republished.has(id)) this.republish.add(id);
      }
      this.maps.get(p.map)!.endWrite(p.key, !err && typeof logId === 'string' ? logId : undefined, this.dirty.has(id));
    });
  }

  /** After (re)connecting: writes what changed meanwhile, reloads every map, republishes after a data loss, then follows the log. */
  private resync(): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = (async () => {
      try {
        const epoch = await this.commands.eval(REDIS_SCRIPTS.epoch, 2, this.keys.epoch, this.keys.touched, `${this.node}:${Date.now()}`, TOUCHED_WINDOW_MS);
        const lost = this.epoch !== undefined && epoch !== this.epoch;
        if (lost)
          for (const m of this.maps.values())
            for (const [key] of m.entries()) {
              const id = `${m.name}\u0000${key}`;
              if (this.dirty.has(id)) continue;
              this.dirty.set(id, { map: m.name, key });
              this.republish.add(id);
            }
        await this.flush();
        const [[, last]] = (await this.commands.multi().xrevrange(this.keys.log, '+', '-', 'COUNT', 1).exec()) as [[unknown, [string, string[]][]]];
        const lastId = last[0]?.[0] ?? '0-0';
        for (const m of this.maps.values()) await this.loadMap(m);
        this.lastLogId = lastId;
        for (const s of this.streams.values()) await this.streamTail(s);
        // Only now: a synchronisation cut short by a drop repeats the republication.
        this.epoch = String(epoch);
        this.setState('connected');
        this.follow();
        this.startSweeps();
        if (this.dirty.size > 0) this.flushSoon();
        for (const s of this.streams.values()) s.send();
      } catch {
        // The connection dropped while synchronising: the next `ready` runs this again.
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  /** Where the change-log reader starts following `s`: after its newest entry (Redis's `$`, made a fixed id so no entry between two reads is missed). */
  private async streamTail(s: RedisStream<unknown>): Promise<void> {
    const [newest] = await this.commands.xrevrange(s.key, '+', '-', 'COUNT', 1);
    s.lastSeenId = newest?.[0] ?? '0-0';
  }

  private async loadMap(m: RedisMap<unknown>): Promise<void> {
    const started = this.monotonic();
    const all = await this.commands.hgetall(this.keys.hash(m.name));
    this.opts.onLatency?.('load', this.monotonic() - started);
    const pendingKeys = new Set<string>();
    for (const p of this.dirty.values()) if (p.map === m.name) pendingKeys.add(p.key);
    m.replaceAll(all, pendingKeys);
  }

  /** Reads the change log from `lastLogId` on while connected, on its own connection (a blocking read holds it). */
  private follow(): void {
    if (this.reader) return;
    const reader = this.opts.connect(this.blockMs);
    this.reader = reader;
    reader.on('error', () => undefined);
    // A reconnected reader is a new client: its id is asked again on every connect.
    const askId = (): void => {
      reader
        .client('ID')
        .then((id) => (this.readerId = Number(id)))
        .catch(() => undefined);
    };
    if (!isCluster(reader)) reader.on('ready', askId);
    const loop = async (): Promise<void> => {
      while (!this.stopped) {
        try {
          if (isCluster(reader)) await this.askClusterReaderId(reader);
          const streams = [...this.streams.values()];
          const res = (await reader.xread(
            'COUNT',
            1000,
            'BLOCK',
            this.blockMs,
            'STREAMS',
            this.keys.log,
            ...streams.map((s) => s.key),
            this.lastLogId,
            ...streams.map((s) => s.lastSeenId),
          )) as [string, [string, string[]][]][] | null;
          for (const [key, entries] of res ?? []) {
            if (key === this.keys.log) for (const [id, fields] of entries) this.apply(id, fields);
            else streams.find((s) => s.key === key)?.seen(entries);
          }
        } catch {
          if (this.stopped) return;
          await sleep(200);
        }
      }
    };
    void loop();
  }

  /**
   * In a Cluster the blocking read goes to the master of the store's slot through one of the
   * reader's node connections: that connection's `CLIENT ID` is what {@link wakeReader} unblocks,
   * asked again whenever the slot's master changed (a failover).
   */
  private async askClusterReaderId(reader: Cluster): Promise<void> {
    const node = await this.slotNode(reader);
    if (!node || node === this.readerNode) return;
    this.readerId = undefined;
    this.readerId = Number(await node.client('ID'));
    this.readerNode = node;
  }

  /** The connection serving the store's slot: the client itself when standalone; in a Cluster the slot's master's connection in `client`'s pool (undefined while unknown). */
  private async slotNode(client: RedisClient): Promise<Redis | undefined> {
    if (!isCluster(client)) return client;
    this.slot ??= Number(await client.cluster('KEYSLOT', this.keys.log));
    const master = client.slots[this.slot]?.[0];
    return client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === master);
  }

  /**
   * Ends the reader's blocking read at once (`CLIENT UNBLOCK`, as if it timed out), so its next read
   * follows a stream opened meanwhile: without it the stream's first entries wait up to `blockMs`.
   * `CLIENT UNBLOCK` names a client of one server: in a Cluster it is sent to the slot's master.
   */
  private wakeReader(): void {
    const id = this.readerId;
    if (id === undefined || this.state.state !== 'connected') return;
    this.slotNode(this.commands)
      .then((node) => node?.client('UNBLOCK', id))
      .catch(() => undefined);
  }

  /** Applies one change-log entry (fields: `m` map, `k` key, `v` JSON value or absent for a delete, `n` node). */
  private apply(id: string, fields: string[]): void {
    if (compareStreamIds(id, this.lastLogId) <= 0) return;
    this.lastLogId = id;
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    const m = this.maps.get(f.get('m') ?? '');
    if (!m) return;
    const key = f.get('k')!;
    // A key with a write not yet sent: that write comes later in the log and wins.
    if (this.dirty.has(`${m.name}\u0000${key}`)) return;
    m.remote(key, f.get('v'), id);
  }

  private startSweeps(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => void this.sweep(), 1000);
    this.sweepTimer.unref();
  }

  /** Removes expired keys of every map with a TTL (any node may sweep; the removals travel through the log). */
  private async sweep(): Promise<void> {
    if (this.state.state !== 'connected') return;
    for (const m of this.maps.values()) {
      if (!m.ttlMs) continue;
      await this.commands
        .eval(REDIS_SCRIPTS.sweep, 3, this.keys.hash(m.name), this.keys.expiries(m.name), this.keys.log, m.name, this.node, this.opts.logLength)
        .catch(() => undefined);
    }
  }

  private disconnected(): void {
    if (this.state.state === 'connected') this.setState('disconnected');
  }

  private setState(state: StoreConnection['state']): void {
    this.state = { state, sinceMs: this.monotonic() };
    this.opts.onConnection?.(this.state);
  }
}

/** One map's replica. */
class RedisMap<V> implements StateMap<V> {
  private readonly values = new Map<string, V>();
  private readonly json = new Map<string, string>();
  /** The log id of this node's last write of each key: older changes of that key are ignored. */
  private readonly ownIds = new Map<string, string>();
  /** Keys with a write being sent, with the last change of the key read from the log meanwhile. */
  private readonly inFlight = new Map<string, { readonly json: string | undefined; readonly id: string } | undefined>();
  private readonly listeners = new Set<(key: string, value: V | undefined) => void>();

  constructor(
    readonly name: string,
    readonly ttlMs: number | undefined,
    private readonly changed: (key: string) => void,
  ) {}

  get size(): number {
    return this.values.size;
  }

  get(key: string): V | undefined {
    return this.values.get(key);
  }

  set(key: string, value: V): void {
    this.put(key, value, JSON.stringify(value));
    this.changed(key);
  }

  delete(key: string): boolean {
    const had = this.values.has(key);
    // A delete is written even when the replica lacks the key: another node may hold it.
    this.changed(key);
    if (had) this.put(key, undefined, undefined);
    return had;
  }

  entries(): IterableIterator<[string, V]> {
    return this.values.entries();
  }

  watch(listener: (key: string, value: V | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A write of `key` is being sent: changes of the key read meanwhile wait for its log id. */
  beginWrite(key: string): void {
    this.inFlight.set(key, undefined);
  }

  /**
   * The write of `key` is done: `id` is its log id (undefined: it failed). The last change read
   * meanwhile applies when it is newer, unless the key is dirty again (that write will win).
   */
  endWrite(key: string, id: string | undefined, dirtyAgain: boolean): void {
    const stashed = this.inFlight.get(key);
    this.inFlight.delete(key);
    if (id) {
      const before = this.ownIds.get(key);
      if (!before || compareStreamIds(id, before) > 0) this.ownIds.set(key, id);
    }
    if (stashed && !dirtyAgain) this.remote(key, stashed.json, stashed.id);
  }

  /** Another node's change (or an expiry), unless this node wrote the key later. */
  remote(key: string, json: string | undefined, id: string): void {
    if (this.inFlight.has(key)) {
      this.inFlight.set(key, { json, id });
      return;
    }
    const own = this.ownIds.get(key);
    if (own && compareStreamIds(id, own) <= 0) return;
    if (json === this.json.get(key)) return;
    this.put(key, json === undefined ? undefined : (JSON.parse(json) as V), json);
  }

  /** Replaces the replica with the hash read from Redis, except keys with writes not yet sent or not yet answered. */
  replaceAll(all: Record<string, string>, dirty: ReadonlySet<string>): void {
    const pending = new Set([...dirty, ...this.inFlight.keys()]);
    for (const key of [...this.values.keys()]) if (!(key in all) && !pending.has(key)) this.put(key, undefined, undefined);
    for (const [key, json] of Object.entries(all)) {
      if (pending.has(key) || json === this.json.get(key)) continue;
      this.put(key, JSON.parse(json) as V, json);
    }
  }

  private put(key: string, value: V | undefined, json: string | undefined): void {
    if (value === undefined) {
      this.values.delete(key);
      this.json.delete(key);
    } else {
      this.values.set(key, value);
      this.json.set(key, json!);
    }
    for (const l of this.listeners) l(key, value);
  }
}

/** How often (ms) the store checks that Redis answers (a PING times out after the connection's command timeout). */
const HEARTBEAT_MS = 1000;
/**
 * How long after Redis lost its data the keys written since are remembered (the touched set), so a
 * node writing back its replica later never undoes them: nodes reconnect within seconds, and a set
 * that expires keeps the memory of a busy metrics map bounded.
 */
const TOUCHED_WINDOW_MS = 10 * 60_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
