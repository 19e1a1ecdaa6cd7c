import type { Socket as UdpSocket } from 'node:dgram';
import type { Server, Socket } from 'node:net';
import type { z } from 'zod';
import type { ClassRangeSource } from '../lpm/rangeTable.js';
import type { Answer, Query } from '../model/query.js';
import type { AdminRoute } from './adminRoute.js';
import type { EngineMetrics } from '../telemetry/engineMetrics.js';
import type { Logger } from '../telemetry/logger.js';
import type { ResolveContext } from '../views/resolveContext.js';
import type { ZoneSigningKeys } from './zoneSigningKeys.js';

/**
 * The front-door contract: how a protocol that asks the engine for decisions (a DNS listener, a
 * DNS server's backend protocol, later an HTTP redirect listener or a native batch receiver)
 * plugs into the process. The composition root (`src/process/`) keeps the list of door kinds;
 * adding a door is one folder and one line there (`src/doors/README.md`, "Adding a front door").
 *
 * The contract is sized for doors that do not exist yet:
 * - asynchronous answers: {@link QueryEngine.resolve} may return a promise (a record whose
 *   decision asks another name server); a synchronous answer stays a plain value, so the doors'
 *   synchronous path allocates no promise and awaits nothing;
 * - work after the answer is built (DNSSEC signing): {@link FrontDoorHost.afterAnswer}, run in
 *   order on every answer the engine built, each step synchronous or not;
 * - doors that are not DNS: {@link FrontDoor} is only a lifecycle; meta-QTYPEs, rcodes and
 *   SERVFAIL belong to the DNS answer wrapper of `src/doors/`, which such a door does not use;
 * - batched doors (many queries per call): the engine answers one query per call without
 *   per-call state, so a door answers a batch by calling it once per query.
 *
 * A door whose settings refer to the rest of the configuration (records, data centers) checks
 * them at load ({@link FrontDoorKind.check}), names the files it reads so `check-config` finds a
 * missing one ({@link FrontDoorKind.files}), and may explain its own decisions on the admin API
 * ({@link FrontDoor.routes}), as `/explain` does for DNS.
 */

/**
 * One front door, created by its {@link FrontDoorKind} and opened by the composition root once
 * the first snapshot is published (so no door answers before the configuration is loaded).
 */
export interface FrontDoor {
  /**
   * Opens its sockets and starts answering. `inherited` holds listening sockets taken over from
   * the process this one replaces (`gslbd ctl replace`), keyed as that door's
   * {@link FrontDoor.listening} named them: a door listens on the one of its key instead of
   * binding (a key it does not find is bound as usual).
   * @throws Error when it cannot listen (address in use, socket path taken or too long).
   */
  start(inherited?: ReadonlyMap<string, ListeningSocket>): Promise<void>;
  /** Stops answering, closes its sockets and connections, and removes files it created. */
  stop(): Promise<void>;
  /** Fields for the `gslbd up` log line (where it listens), keyed by the door's name. */
  describe(): Record<string, unknown>;
  /**
   * Applies the door's settings a reload may change (the standalone listener's query-log
   * sampling), called after every successful reload with the whole new validated configuration,
   * as its kind's `create` got it at start-up. Settings the door cannot change while it runs are
   * marked restart-only in its schema instead (the reload warns about them). None when absent.
   */
  reconfigure?(config: unknown): void;
  /**
   * Admin routes the door adds (its decision trace, for a door whose question `/explain` cannot
   * express), served by the admin listener when one is configured; none when absent.
   */
  readonly routes?: readonly AdminRoute[];
  /**
   * Its listening sockets, for a replacement process, keyed by what they were configured as
   * (listener index, address, configured port or socket path), so the replacement with the same
   * settings finds them. A door without it cannot be replaced in place.
   */
  listening?(): ReadonlyMap<string, ListeningSocket>;
  /**
   * The hand-over to a replacement process that listens on the same sockets now: stop accepting
   * (close this process's copies of the listening sockets, which stay open in the replacement),
   * stop reading each open connection, answer the requests it read whole, and pass the
   * connection to `pass` once those answers are out (nothing unanswered, nothing unsent), with the
   * bytes of a request read only in part, so its peer sees neither a close nor a lost request,
   * even when it never pauses between requests. Resolves when no connection is left, with the
   * number it closed instead because their answers were not out within its deadline (a door
   * that passes no connections resolves with nothing).
   */
  handOver?(pass: (connection: HandedConnection) => void): Promise<number | void>;
  /** Takes over a connection {@link FrontDoor.handOver} passed in the process this one replaces. */
  adopt?(connection: HandedConnection): void;
}

/** A listening socket a replacement process takes over: a stream listener (TCP or Unix) or a UDP socket. */
export type ListeningSocket = Server | UdpSocket;

/** A connection passed to a replacement process once its answers are out, with what its door knew of it. */
export interface HandedConnection {
  readonly socket: Socket;
  /** The door's state of the connection, as JSON values (the PowerDNS `instance`, the compact protocol version). */
  readonly state: Readonly<Record<string, string | number>>;
  /**
   * Bytes of a request the old process read only in part. The replacement reads them before the
   * socket's own (the hand-over puts them back at the front of the socket's readable buffer
   * before the door adopts it), so the door needs no frame boundary to pass a busy connection.
   */
  readonly received?: Buffer;
}

/** A file a door reads: its path as configured (relative to the configuration file) and the configuration key that names it. */
export interface DoorFileReference {
  /** Configuration path of the setting, for the problem message (`listeners.redirect.tls.certFile`). */
  readonly key: string;
  /** The path as configured; relative paths are relative to the configuration file's folder. */
  readonly path: string;
}

/** One key of the configuration's `listeners` section: its name and the schema of its value. */
export interface ListenerSection<N extends string = string, L extends z.ZodType = z.ZodType> {
  /** The key under `listeners` (`listeners.<name>`); also the door's name in logs. */
  readonly name: N;
  /** Schema of `listeners.<name>`, with its `.optional()` or `.default()`: an absent key is valid. */
  readonly listener: L;
}

/**
 * A kind of front door: its listener key, the top-level configuration keys it owns, and how it
 * is built from the validated configuration.
 *
 * `C` is the part of the validated configuration the door reads (its `listeners.<name>` value
 * and its root keys); `H` what the process gives it ({@link FrontDoorHost} or an extension of it).
 */
export interface FrontDoorKind<
  C = unknown,
  H extends FrontDoorHost = FrontDoorHost,
  N extends string = string,
  L extends z.ZodType = z.ZodType,
> extends ListenerSection<N, L> {
  /** Top-level keys of the configuration file it owns besides its listener key (the standalone listener's `dns`). */
  readonly root?: z.ZodRawShape;
  /**
   * Cross-reference checks of its settings against the rest of the configuration (records, data
   * centers), run once the schema passed, at start-up, `check-config` and every reload: each
   * problem is an issue on `ctx` with its path from the configuration's root. `config` is the
   * whole validated configuration.
   */
  check?(config: C, ctx: z.RefinementCtx): void;
  /**
   * The files its settings name, checked (exist, regular) by `check-config` and at start-up before
   * anything loads, as the admin token file and monitors' CA files are; none when absent.
   */
  files?(config: C): readonly DoorFileReference[];
  /**
   * The door for `config`, not yet listening (the composition root calls `start`), or undefined
   * when the configuration does not ask for it.
   */
  create(config: C, host: H): FrontDoor | undefined;
}

/** What the process gives every front door. */
export interface FrontDoorHost {
  /** The configuration file: relative paths in a listener's settings are relative to its folder. */
  readonly file: string;
  readonly engine: QueryEngine;
  /** The engine's Prometheus metrics: query, rcode and data-center counters, resolve() durations; a door registers its own on `metrics.registry`. */
  readonly metrics: EngineMetrics;
  readonly log: Logger;
  /** Run in order on every answer the engine built, before the door encodes it (DNSSEC signing). */
  readonly afterAnswer: readonly AfterAnswerHook[];
  /**
   * The signing keys of the signed zones, for doors whose DNS server signs answers itself
   * (PowerDNS live signing); absent when no capability provides keys.
   */
  readonly zoneKeys?: ZoneSigningKeys;
}

/** The engine as every front door sees it. */
export interface QueryEngine {
  /**
   * Answers one query on the snapshot current at the call. A promise only when the answer waits
   * on something outside the process; an answer known at once is returned as it is.
   * @throws Error (or rejects) on an internal failure: the door answers its error form (SERVFAIL).
   */
  resolve(query: Query): Answer | Promise<Answer>;
  /** The engine's random source, clock and rotation store (doors sample their query logs with it). */
  readonly ctx: ResolveContext;
  /**
   * Calls `listener` synchronously each time a snapshot is published (a reload or a new state
   * view: health, overrides, metrics), before the publish returns, so a door that keeps answers
   * outside the engine (the standalone listener's native fast path) drops them before any later
   * query. Returns the function that removes the listener. Absent on engines that never publish.
   */
  onPublish?(listener: () => void): () => void;
  /**
   * The engine for answers nobody asked (the standalone listener's fast path answering its
   * templates' queries again after a publish): answers on the same current snapshot but moves no
   * state a query reads — rotation is read and never advanced, the random source is not drawn
   * from, caches keep their use marks and counters, no client is noted for the agents' probes —
   * and never waits (a selection delegated to a sub-tier gives its own answer, never reused).
   * Every answer that does not vary from query to query (`Answer.reuseScope` set) is the one a
   * real query would get; the others may differ and must not be used. Its `onPublish` and
   * `unasked` are absent. Absent on engines that cannot answer so.
   */
  unasked?(): QueryEngine;
  /**
   * The location class tables of the current snapshot's records whose decisions may be reused by
   * class (`Answer.reuseClass` names one of them), each once: what the standalone listener's native
   * fast path copies at each publish. The same array while the compiled records stay (a publish of
   * a state view only). Absent on engines without class tables.
   */
  classTables?(): readonly ClassRangeSource[];
}

/**
 * A step after the engine built an answer and before the door encodes it (DNSSEC signing: the
 * signed answer). Returns the answer to go on with, which may be `answer` itself; a promise only
 * when the step has to wait.
 * @throws Error (or rejects) when the answer cannot be completed: the door answers SERVFAIL.
 */
export interface AfterAnswerHook {
  (query: Query, answer: Answer): Answer | Promise<Answer>;
  /**
   * The same step for `/explain`: the answer it gives and what it did (for the signer: which
   * RRsets it signed and whether the signatures came from its cache). A step without it is run
   * as it is and says nothing.
   */
  explain?(query: Query, answer: Answer): AfterAnswerExplanation;
  /**
   * True when the step returns the engine's answer itself, untouched, for `query` — whatever the
   * answer, the time and the step's own state until the next publish (a reload commits a new one).
   * A door that replays replies outside the engine (the standalone listener's native fast path,
   * src/doors/dns/README.md) replays only such answers; a step without it counts as changing every
   * answer, so nothing it sees is replayed.
   */
  leavesUnchanged?(query: Query): boolean;
}

/** What one after-answer step did to an explained answer. */
export interface AfterAnswerExplanation {
  readonly answer: Answer;
  /** The step's name and its account, as `/explain` shows it. */
  readonly notes: Readonly<Record<string, unknown>>;
}
