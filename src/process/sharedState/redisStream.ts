import type { RedisClient } from './redisClient.js';
import type { StateStream, StreamEntry } from '../../core/contracts/stateStore.js';

/** What a {@link RedisStream} needs from its store. */
export interface RedisStreamHost {
  /** The command connection, or undefined while Redis is unreachable (nothing is sent then). */
  commands(): RedisClient | undefined;
  /** This node's name: the consumer name within every group, and the `n` field of its entries. */
  readonly node: string;
  /** Called with the time (ms) each store operation took (metrics). */
  readonly onLatency?: (operation: string, ms: number) => void;
  readonly monotonic: () => number;
}

/**
 * One {@link StateStream} shared through a Redis Stream, so the readers of a group may ask any
 * node and each entry still goes to one of them:
 *
 * - `append` queues the value (at most the bound while Redis is unreachable: the oldest queued go
 *   first) and sends it with `XADD key MAXLEN n * v <json> n <node>`; the watchers are told once
 *   Redis holds it, with Redis's id.
 * - `read` is `XREADGROUP GROUP <group> <node> COUNT n NOACK STREAMS key >`: Redis hands every
 *   entry to one consumer of the group, whichever node asks (at most once: `NOACK` keeps no pending
 *   list, so nothing is redelivered). A group that does not exist yet (`NOGROUP`: first read, or
 *   Redis restarted empty) is created from the oldest entry kept (`XGROUP CREATE … 0 MKSTREAM`).
 * - Other nodes' appends reach the watchers through the store's change-log reader, which follows
 *   every stream key with the log in one blocking `XREAD` and calls {@link seen}.
 *
 * Entries lost with a Redis that restarts without its data are not re-sent: they are work requests
 * (probe requests are noted again after `refreshSeconds`), not state.
 */
export class RedisStream<V> implements StateStream<V> {
  private readonly listeners = new Set<(entry: StreamEntry<V>) => void>();
  private queued: V[] = [];
  private sending = false;
  private known = 0;
  /** The id of the last entry the change-log reader has seen (it reads after it). */
  lastSeenId = '$';

  constructor(
    readonly key: string,
    private readonly maxLength: number,
    private readonly host: RedisStreamHost,
  ) {
    if (!(maxLength >= 1)) throw new RangeError(`a stream keeps at least one entry (maxLength ${maxLength})`);
  }

  get length(): number {
    return this.known;
  }

  append(value: V): void {
    this.queued.push(value);
    if (this.queued.length > this.maxLength) this.queued = this.queued.slice(-this.maxLength);
    this.send();
  }

  /** Sends the queued appends when connected (the store calls it again after a reconnection). */
  send(): void {
    const redis = this.host.commands();
    if (this.sending || redis === undefined || this.queued.length === 0) return;
    this.sending = true;
    const batch = this.queued;
    this.queued = [];
    const pipeline = redis.pipeline();
    for (const v of batch) pipeline.xadd(this.key, 'MAXLEN', this.maxLength, '*', 'v', JSON.stringify(v), 'n', this.host.node);
    pipeline.xlen(this.key);
    const started = this.host.monotonic();
    void pipeline
      .exec()
      .catch(() => null)
      .then((results) => {
        this.host.onLatency?.('append', this.host.monotonic() - started);
        const unsent: V[] = [];
        batch.forEach((value, i) => {
          const [err, id] = results?.[i] ?? [new Error('not sent'), null];
          if (err || typeof id !== 'string') unsent.push(value);
          else for (const l of this.listeners) l({ id, value });
        });
        const len = results?.[batch.length];
        if (len && !len[0] && typeof len[1] === 'number') this.known = len[1];
        // Unsent appends go back before the newer ones, within the bound.
        this.queued = [...unsent, ...this.queued].slice(-this.maxLength);
        this.sending = false;
        if (unsent.length === 0) this.send();
      });
  }

  async read(group: string, count: number): Promise<StreamEntry<V>[]> {
    const redis = this.host.commands();
    if (redis === undefined || count <= 0) return [];
    const started = this.host.monotonic();
    try {
      let res: [string, [string, string[]][]][] | null;
      try {
        res = await this.readGroup(redis, group, count);
      } catch (e) {
        if (!String((e as Error).message).startsWith('NOGROUP')) throw e;
        await redis.xgroup('CREATE', this.key, group, '0', 'MKSTREAM').catch((err: Error) => {
          // Another node created it meanwhile.
          if (!err.message.startsWith('BUSYGROUP')) throw err;
        });
        res = await this.readGroup(redis, group, count);
      }
      this.host.onLatency?.('read', this.host.monotonic() - started);
      const out: StreamEntry<V>[] = [];
      for (const [, entries] of res ?? []) for (const [id, fields] of entries) out.push({ id, value: JSON.parse(field(fields, 'v')!) as V });
      return out;
    } catch {
      return [];
    }
  }

  async backlog(group: string): Promise<number> {
    const redis = this.host.commands();
    if (redis === undefined) return 0;
    try {
      const groups = (await redis.xinfo('GROUPS', this.key)) as unknown[][];
      const g = groups.find((fields) => field(fields, 'name') === group);
      this.known = await redis.xlen(this.key);
      if (g === undefined) return this.known;
      const lag = field(g, 'lag');
      if (typeof lag === 'number') return lag;
      // Redis leaves the lag unknown after trimming: count what lies after the group's last delivered id.
      return (await redis.xrange(this.key, `(${String(field(g, 'last-delivered-id'))}`, '+')).length;
    } catch {
      return 0;
    }
  }

  watch(listener: (entry: StreamEntry<V>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Entries the change-log reader read from the stream: other nodes' appends go to the watchers (this node's went when sent). */
  seen(entries: readonly [string, string[]][]): void {
    for (const [id, fields] of entries) {
      this.lastSeenId = id;
      // This node's own appends were counted when sent (XLEN).
      if (field(fields, 'n') === this.host.node) continue;
      this.known = Math.min(this.maxLength, this.known + 1);
      const json = field(fields, 'v');
      if (json !== undefined) for (const l of this.listeners) l({ id, value: JSON.parse(json) as V });
    }
  }

  private readGroup(redis: RedisClient, group: string, count: number): Promise<[string, [string, string[]][]][] | null> {
    return redis.xreadgroup('GROUP', group, this.host.node, 'COUNT', count, 'NOACK', 'STREAMS', this.key, '>') as Promise<
      [string, [string, string[]][]][] | null
    >;
  }
}

/** The value after `name` in a flat Redis reply of alternating names and values. */
function field<T>(fields: readonly T[], name: string): T | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
