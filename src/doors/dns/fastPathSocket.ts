import { parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import type { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { AnswerClasses } from './answerClasses.js';
import type { FastPathAddon, FastPathBatch, FastPathHandle, FastPathRateLimit, FastPathStats } from './fastPathAddon.js';
import type { FastPathMetrics } from './fastPathMetrics.js';
import type { MessageHandler, ReplyReuse } from './handleMessage.js';
import type { ClassRangeSource } from '../../core/lpm/rangeTable.js';

/**
 * Templates re-answered after a publish, at most: bounds the pass's time (about 5–20 µs of
 * JavaScript each, in chunks between queries) and the memory it holds (the queries, ≤ 512 bytes
 * each, typically ~60: ≤ 2 MiB, typically 0.25 MiB). Blocks beyond it get their template from
 * their first query, as before.
 */
const REWARM_MAX = 4096;
/** Templates re-answered per event-loop turn: live queries wait at most about this many answers. */
const REWARM_CHUNK = 64;
/** Class table ids given out before tables are copied no more (ids are not reused: a template keyed by a dropped id must never meet a new table). */
const MAX_CLASS_TABLE_ID = 0xfffffffe;

/**
 * One listener address served by the native fast path (`native/fast_path.cc`, README "Fast
 * path"): native threads answer the queries whose reply they hold a template for; every other
 * datagram reaches {@link MessageHandler.handle} here, one call per batch, exactly as the Node
 * socket would hand it, and its reply goes back through the addon, kept as a template when
 * `handle` says it may be replayed for the client's block. Every publish of the engine starts a
 * new template generation before the publish returns. With `dns.queryLogSampleRate` > 0 the
 * threads hand that fraction of their hits over too, flagged, and `handle` logs each of them: the
 * query log samples hits and misses alike.
 *
 * Each template is installed with its answer class ({@link AnswerClasses}); the threads count
 * their replays per class, and before the engine's query counters are read ({@link
 * EngineMetrics.beforeScrape}) the replays since the last read are added to them
 * ({@link EngineMetrics.countReplayed}): `/metrics` counts a query once, whichever path answered.
 */
export class FastPathSocket {
  private readonly server: FastPathHandle;
  private readonly unsubscribe: () => void;
  private peerText = '';
  private peer: IpAddress | undefined;
  private readonly reuse: ReplyReuse = { scope: -1, answer: undefined, type: 0, classTable: undefined, classId: -1 };
  /**
   * The class tables copied into native memory (`setClassTable`), by the engine's table object:
   * their native id, and the publish count when a reply last named them.
   */
  private readonly classTables = new Map<ClassRangeSource, { readonly id: number; used: number }>();
  private lastClassTableId = 0;
  private readonly classes = new AnswerClasses();
  /** Per answer class: the native replays already added to the engine's counters. */
  private counted = new Float64Array(0);
  private readonly stopFolding: () => void;

  /**
   * Binds `address`:`port` with `threads` native sockets and threads, limiting each source block's
   * responses by `rateLimit` when given. `rewarmMessages` (a handler on the engine's unasked view,
   * `QueryEngine.unasked`, whose counters are not the engine's) re-answers the templates' queries
   * after each publish; without it none are.
   * @throws Error when the address cannot be bound.
   */
  constructor(
    private readonly addon: FastPathAddon,
    private readonly messages: MessageHandler,
    private readonly log: Logger,
    onPublish: ((listener: () => void) => () => void) | undefined,
    address: string,
    port: number,
    threads: number,
    sampleRate: number,
    private readonly metrics: FastPathMetrics,
    private readonly engineMetrics: EngineMetrics,
    rateLimit?: FastPathRateLimit,
    private readonly rewarmMessages?: MessageHandler,
    private readonly snapshotClassTables?: () => readonly ClassRangeSource[],
  ) {
    this.server = addon.open(
      address,
      port,
      threads,
      (batch, packets, peers, _ports, sampled) => this.answer(batch, packets, peers, sampled),
      sampleRate,
      rateLimit,
    );
    // Without publish notifications nothing could ever make a template stale: keep none.
    this.unsubscribe = onPublish ? onPublish(() => this.published()) : () => undefined;
    this.keep = onPublish !== undefined;
    metrics.add(this.counters);
    this.stopFolding = engineMetrics.beforeScrape(() => this.foldReplays());
    this.syncClassTables();
  }

  private readonly counters = (): FastPathStats => this.addon.stats(this.server);

  /** Publishes seen: a re-answering pass started on an earlier one stops when this moved on. */
  private publishes = 0;
  /** Templates of the last publish re-answered and installed so far, and whether that pass is still running. */
  private rewarm = { installed: 0, running: false };

  /**
   * A publish: the queries of the templates kept so far (at most {@link REWARM_MAX}) are taken,
   * the generation is bumped before the publish returns (nothing kept so far is replayed again),
   * then JavaScript answers those queries on the new snapshot, {@link REWARM_CHUNK} per event-loop
   * turn, through `rewarmMessages` (the engine's unasked view: no rotation step, no draw from the
   * shared random source; its counters are not the engine's: these are not queries anyone asked),
   * and installs the replayable replies — so the first query of a client block after a publish is
   * answered natively instead of by JavaScript. A reply that varies (would rotate) is not
   * replayable and is not installed. A later publish stops the pass.
   */
  private published(): void {
    const queries = this.rewarmMessages ? this.addon.templates(this.server, REWARM_MAX) : [];
    this.addon.bump(this.server);
    const publish = ++this.publishes;
    this.syncClassTables();
    this.rewarm = { installed: 0, running: queries.length > 0 };
    let next = 0;
    const chunk = (): void => {
      if (publish !== this.publishes || this.closed) return;
      const reuse: ReplyReuse = { scope: -1, answer: undefined, type: 0, classTable: undefined, classId: -1 };
      for (const end = Math.min(queries.length, next + REWARM_CHUNK); next < end; next++) {
        const [query, peer] = queries[next]!;
        try {
          reuse.scope = -1;
          reuse.answer = undefined;
          reuse.classTable = undefined;
          const reply = this.rewarmMessages!.handle(query, 'udp', parseIp(peer), reuse);
          const answer = reuse.answer;
          if (!(reply instanceof Buffer) || reuse.scope < 0 || answer === undefined) continue;
          const table = this.classTableId(reuse.classTable);
          const answerClass = this.classes.idOf(reuse.type, answer);
          if (this.addon.install(this.server, query, peer, reply, reuse.scope, answerClass, table, table > 0 ? reuse.classId : 0)) this.rewarm.installed++;
        } catch (e) {
          this.log.error({ err: e }, 'fast path: answering a template again failed');
        }
      }
      if (next < queries.length) setImmediate(chunk);
      else this.rewarm.running = false;
    };
    if (queries.length > 0) setImmediate(chunk);
  }

  /** The last publish's pass: templates installed again, and whether it is still running. */
  rewarmProgress(): { readonly installed: number; readonly running: boolean } {
    return this.rewarm;
  }

  private closed = false;

  /**
   * The native id of a reply's class table (0: none, or its ranges cannot be given), copied into
   * native memory on first use: a few milliseconds for a record's tables over the full city data
   * (README "Fast path", class templates), once per table while replies keep naming it.
   */
  private classTableId(table: ClassRangeSource | undefined): number {
    if (table === undefined) return 0;
    const known = this.classTables.get(table);
    if (known !== undefined) {
      known.used = this.publishes;
      return known.id;
    }
    // A reply of an earlier snapshot (answered before the publish, sent after): its table is not to be copied again.
    if (this.snapshotTables !== undefined && !this.snapshotTables.set.has(table)) return 0;
    const ranges = table.classRanges();
    if (ranges === undefined || this.lastClassTableId >= MAX_CLASS_TABLE_ID) return 0;
    const id = ++this.lastClassTableId;
    try {
      this.addon.setClassTable(this.server, id, ranges.v4starts, ranges.v4ids, ranges.v6starts, ranges.v6ids);
    } catch (e) {
      this.log.error({ err: e }, 'fast path: copying a class table failed; its answers are replayed by block only');
      return 0;
    }
    this.classTables.set(table, { id, used: this.publishes });
    return id;
  }

  /** The engine's class tables at the last publish (`QueryEngine.classTables`), and as a set. */
  private snapshotTables: { readonly list: readonly ClassRangeSource[]; readonly set: ReadonlySet<ClassRangeSource> } | undefined;
  /** The last publish's copy of new class tables: tables copied, milliseconds spent, and whether it is still running. */
  private classTableExport = { tables: 0, ms: 0, running: false };

  /**
   * At open and at each publish. With the engine's class tables (`QueryEngine.classTables`): when
   * they are another list than the last publish's (the records were compiled again), the copies of
   * tables no longer among them are dropped and the new ones are copied, one per event-loop turn
   * (each a few milliseconds over the full city data; a reply naming one not copied yet copies it
   * then); a publish of a state view only (health, overrides, metrics) keeps the same list and
   * copies nothing. Without them: the tables no reply named since the publish before are dropped
   * (their templates are stale now anyway), and each is copied when a reply first names it.
   */
  private syncClassTables(): void {
    if (this.snapshotClassTables === undefined) {
      for (const [table, { id, used }] of this.classTables) {
        if (used >= this.publishes - 1) continue;
        this.addon.dropClassTable(this.server, id);
        this.classTables.delete(table);
      }
      return;
    }
    const list = this.snapshotClassTables();
    if (this.snapshotTables?.list === list) {
      this.classTableExport = { tables: 0, ms: 0, running: false };
      return;
    }
    const set = new Set(list);
    this.snapshotTables = { list, set };
    for (const [table, { id }] of this.classTables) {
      if (set.has(table)) continue;
      this.addon.dropClassTable(this.server, id);
      this.classTables.delete(table);
    }
    const publish = this.publishes;
    const pending = list.filter((table) => !this.classTables.has(table));
    this.classTableExport = { tables: 0, ms: 0, running: pending.length > 0 };
    const next = (): void => {
      if (publish !== this.publishes || this.closed) return;
      const table = pending.shift();
      if (table !== undefined) {
        const started = performance.now();
        if (this.classTableId(table) > 0) this.classTableExport.tables++;
        this.classTableExport.ms += performance.now() - started;
      }
      if (pending.length > 0) setImmediate(next);
      else this.classTableExport.running = false;
    };
    if (pending.length > 0) setImmediate(next);
  }

  /** The last publish's (or the open's) copy of class tables: tables copied, the milliseconds it took in all, and whether it still runs. */
  classTableProgress(): { readonly tables: number; readonly ms: number; readonly running: boolean } {
    return this.classTableExport;
  }

  /** Class tables held in native memory now (for tests and `/metrics`-free diagnostics). */
  get classTableCount(): number {
    return this.classTables.size;
  }

  private readonly keep: boolean;

  /** Counters since the socket opened. */
  stats(): FastPathStats {
    return this.addon.stats(this.server);
  }

  /** Samples that fraction (0–1) of the threads' template hits for the query log from their next batch on (a reload's `dns.queryLogSampleRate`). */
  setSampleRate(rate: number): void {
    this.addon.setSampleRate(this.server, rate);
  }

  /** Stops the native threads and closes the sockets; their last replays are added to the engine's counters. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.metrics.remove(this.counters);
    this.addon.close(this.server);
    this.foldReplays();
    this.stopFolding();
  }

  /** Adds the threads' replays since the last call to the engine's query counters, class by class. */
  private foldReplays(): void {
    const classes = this.classes.list;
    const now = new Float64Array(classes.length);
    this.addon.classCounts(this.server, now);
    const before = this.counted;
    for (let c = 0; c < now.length; c++) {
      const n = now[c]! - (before[c] ?? 0);
      if (n > 0) this.engineMetrics.countReplayed(n, 'udp', classes[c]!.type, classes[c]!.answer);
    }
    this.counted = now;
  }

  private answer(batch: FastPathBatch, packets: Buffer[], peers: string[], sampled: Uint8Array | undefined): void {
    const n = packets.length;
    const replies: (Buffer | null)[] = new Array<Buffer | null>(n).fill(null);
    const scopes = new Int32Array(n).fill(-1);
    const classes = new Uint32Array(n);
    let classTables: Uint32Array | undefined;
    let classIds: Uint32Array | undefined;
    for (let i = 0; i < n; i++) {
      try {
        if (peers[i] !== this.peerText || !this.peer) {
          this.peer = parseIp(peers[i]!);
          this.peerText = peers[i]!;
        }
        this.reuse.scope = -1;
        this.reuse.answer = undefined;
        this.reuse.classTable = undefined;
        const reply = this.messages.handle(packets[i]!, 'udp', this.peer, this.keep ? this.reuse : undefined, sampled !== undefined && sampled[i] === 1);
        if (reply instanceof Promise) {
          reply.then(
            (bytes) => this.addon.replyOne(this.server, batch, i, bytes),
            (e: unknown) => this.log.error({ err: e }, 'UDP message handling failed'),
          );
        } else {
          replies[i] = reply;
          const answer = this.reuse.answer;
          const id = this.reuse.scope >= 0 && answer !== undefined ? this.classes.idOf(this.reuse.type, answer) : -1;
          if (id >= 0) {
            scopes[i] = this.reuse.scope;
            classes[i] = id;
            const table = this.classTableId(this.reuse.classTable);
            if (table > 0) {
              classTables ??= new Uint32Array(n);
              classIds ??= new Uint32Array(n);
              classTables[i] = table;
              classIds[i] = this.reuse.classId;
            }
          }
        }
      } catch (e) {
        this.log.error({ err: e }, 'UDP message handling failed');
      }
    }
    try {
      this.addon.reply(this.server, batch, replies, scopes, classes, classTables, classIds);
    } catch (e) {
      this.log.error({ err: e }, 'fast path reply failed');
    }
  }
}
