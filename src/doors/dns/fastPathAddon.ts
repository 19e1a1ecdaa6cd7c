import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../../core/lpm/nativeAddon.js';

/** A native fast-path server (opaque handle). */
export type FastPathHandle = { readonly __fastPath: unique symbol };
/** One batch of datagrams handed to JavaScript (opaque handle, valid until collected). */
export type FastPathBatch = { readonly __fastPathBatch: unique symbol };

/**
 * Called once per batch of datagrams the native threads did not answer: the datagrams, their
 * senders' addresses (presentation form) and ports, by index; `sampled` (present when any is) has
 * 1 for a datagram the threads held a template for but handed over for the query log (JavaScript
 * answers it as usual and logs it).
 */
export type FastPathBatchHandler = (batch: FastPathBatch, packets: Buffer[], peers: string[], ports: number[], sampled: Uint8Array | undefined) => void;

/**
 * Response-rate limiting settings as the addon takes them (`dns.fastPath.rateLimit`, README "Fast
 * path", "Abuse"): one token bucket of `burst` tokens refilled at `rate` per second for each source
 * block (`ipv4Prefix` / `ipv6Prefix` bits of the sender's address), `entries` blocks tracked at
 * once; every `slip`-th limited datagram of a block gets an empty TC=1 reply, the others none
 * (`slip` 0: none ever).
 */
export interface FastPathRateLimit {
  readonly rate: number;
  readonly burst: number;
  readonly slip: number;
  readonly ipv4Prefix: number;
  readonly ipv6Prefix: number;
  readonly entries: number;
}

/** The functions of `native/fast_path.cc`. */
export interface FastPathAddon {
  /**
   * Binds `threads` UDP sockets on `address`:`port` (SO_REUSEPORT when more than one) and starts
   * one native thread per socket. `sampleRate` (0–1, `dns.queryLogSampleRate`): the fraction of
   * template hits handed to JavaScript anyway, flagged `sampled`, so the query log sees them.
   * `rateLimit` (absent: off) limits the datagrams of each source block before anything else, both
   * those the threads answer and those they would hand to JavaScript (`native/rate_limit.h`).
   * @throws Error when an address cannot be bound or an argument is out of range.
   */
  open(address: string, port: number, threads: number, onBatch: FastPathBatchHandler, sampleRate: number, rateLimit?: FastPathRateLimit): FastPathHandle;
  /**
   * Sends a batch's replies (null: no reply) in one `sendmmsg`, and keeps as a template every
   * reply whose scope is ≥ 0 (the client block's prefix length, `Answer.reuseScope`) and that
   * echoes its query's ID, question name and ECS address; its replays are counted under its answer
   * class from `classes` (an id below 2^20, see `classCounts`). A template serves every letter case
   * of its question name (the reply carries the question as asked): `handleMessage.ts` marks only
   * replies that differ between case variants in the question alone (`caseNeutralOwners`).
   * With `classTables` and `classIds`: a reply whose class table id is not 0 is also kept as the
   * question's class template for that class of the table (see {@link setClassTable}), when the
   * table gives the client that class and `scope`; the threads then replay it to every client of the
   * class and family whose block has no template, with that client's ECS scope.
   * @throws Error when the arrays are not one entry per datagram.
   */
  reply(
    server: FastPathHandle,
    batch: FastPathBatch,
    replies: (Buffer | null)[],
    scopes: Int32Array,
    classes: Uint32Array,
    classTables?: Uint32Array,
    classIds?: Uint32Array,
  ): void;
  /** Sends one reply that settled after its batch (never kept as a template). */
  replyOne(server: FastPathHandle, batch: FastPathBatch, index: number, reply: Buffer): void;
  /**
   * For at most `max` templates of the current generation: the query that installed it (ID 0, the
   * question name's letters lower-cased as in the template key, flags, EDNS and ECS address as
   * sent) and its sender's address — what
   * JavaScript answers again on a new snapshot to install the new generation's templates.
   * @throws Error when the arguments are not a server and a number.
   */
  templates(server: FastPathHandle, max: number): [query: Buffer, peer: string][];
  /**
   * Keeps `reply` as the template of `query` from `peer` for the client block of prefix length
   * `scope`, on the current generation, counted in answer class `answerClass` when replayed (as
   * {@link reply} does for a batch's datagram). False when the query is outside the native subset,
   * the reply does not echo its ID, question name and ECS address, or an argument is out of range.
   * With `classTable` (an id of {@link setClassTable}, not 0) and `classId`, also kept as the
   * question's class template, as {@link reply} does.
   * @throws Error when the arguments are not of these types, or `peer` is not an IP address.
   */
  install(
    server: FastPathHandle,
    query: Buffer,
    peer: string,
    reply: Buffer,
    scope: number,
    answerClass: number,
    classTable?: number,
    classId?: number,
  ): boolean;
  /**
   * Copies one record's location class tables (`ClassRanges`: `RangeTable4` / `RangeTable6` arrays)
   * into native memory as table `id` (1 – 2^32 − 2), replacing the one of that id; lookups in the
   * copy give the class and block prefix `LocationClasses.lookup` gives, and the ECS scope
   * max(`ipv4BlocksScope`, prefix). Costs one copy of the arrays and a 65,537-entry index per family.
   * @throws Error when the arrays are not Uint32Arrays of one id per start, starting at 0 and ascending.
   */
  setClassTable(server: FastPathHandle, id: number, v4starts: Uint32Array, v4ids: Uint32Array, v6starts: Uint32Array, v6ids: Uint32Array): void;
  /** Forgets class table `id`: class templates keyed by it are no longer replayed. */
  dropClassTable(server: FastPathHandle, id: number): void;
  /**
   * For tests: per address (`addresses`: 4 words each, an IPv4 address in the first; `families`: 4
   * or 6) the native lookup in class table `id`, as `classId * 65536 + prefix * 256 + scope` in
   * `out` (−1 without that table).
   */
  classLookup(server: FastPathHandle, id: number, addresses: Uint32Array, families: Uint8Array, out: Float64Array): void;
  /** Starts a new generation: every template kept so far is stale from the next lookup on. Returns the generation. */
  bump(server: FastPathHandle): number;
  /**
   * Sets the fraction of template hits handed to JavaScript for the query log (`dns.queryLogSampleRate`
   * after a reload): each thread applies it from its next batch on.
   * @throws Error when `rate` is not within 0–1.
   */
  setSampleRate(server: FastPathHandle, rate: number): void;
  /**
   * Writes into `out[c]`, for each answer class `c` below `out.length`, the datagrams the threads
   * answered from templates of that class since open (summed over the threads; sampled hits,
   * answered by JavaScript, are not among them).
   * @throws Error when `out` is not a Float64Array.
   */
  classCounts(server: FastPathHandle, out: Float64Array): void;
  /** Counters since open, summed over the threads when called (each thread counts once per batch): see {@link FastPathStats}. */
  stats(server: FastPathHandle): FastPathStats;
  /** Stops the threads (within 0.2 s) and closes the sockets; batches still queued are discarded. */
  close(server: FastPathHandle): void;
  readonly abi: number;
}

/** Counters of one fast-path server since it was opened. */
export interface FastPathStats {
  /** Datagrams answered from a template by a native thread. */
  readonly hits: number;
  /** Datagrams handed to JavaScript because no template answers them (or the parser does not accept them). */
  readonly misses: number;
  /** Template hits handed to JavaScript for the query log (`dns.queryLogSampleRate`). */
  readonly sampled: number;
  /** Datagrams dropped: longer than 4096 bytes, or JavaScript's queue was full. */
  readonly dropped: number;
  /** Datagrams left unanswered by response-rate limiting. */
  readonly limited: number;
  /** Datagrams over the rate answered with an empty TC=1 reply instead (every `slip`-th). */
  readonly slipped: number;
  /** Templates kept (replies JavaScript marked as replayable). */
  readonly installed: number;
  /** Hits (among {@link hits}) answered by a class template: the client's block had none. */
  readonly classHits: number;
  /** Class templates kept (replies replayable for every client of their location class). */
  readonly classInstalled: number;
}

const ABI = 8;
let cached: { readonly addon: FastPathAddon | undefined; readonly error?: string } | undefined;

/**
 * Loads `build/Release/gslbd_fastpath.node` (built by `npm install` through binding.gyp) once;
 * `$GSLBD_FASTPATH_ADDON` points at another build (the sanitizer build in tests). Never throws:
 * the result says why the addon is unavailable, and the listener falls back to Node's sockets.
 */
export function loadFastPathAddon(): { readonly addon: FastPathAddon | undefined; readonly error?: string } {
  if (cached) return cached;
  const path = process.env.GSLBD_FASTPATH_ADDON || join(packageRoot(), 'build', 'Release', 'gslbd_fastpath.node');
  try {
    const addon = createRequire(import.meta.url)(path) as FastPathAddon;
    if (addon.abi !== ABI) throw new Error(`ABI ${addon.abi}, expected ${ABI}: rebuild it with npm run build:native`);
    cached = { addon };
  } catch (e) {
    cached = { addon: undefined, error: `${path}: ${(e as Error).message.split('\n')[0]!}` };
  }
  return cached;
}
