import { InProcessStateStore, type StateMap, type StateStore } from '../../core/contracts/stateStore.js';
import type { HealthStatus } from '../../core/views/healthView.js';
import type { CheckObservation } from './healthStore.js';
import { LateEntries } from './lateEntries.js';
import { rendezvousOwners } from './rendezvous.js';
import type { SchedulerClock } from './scheduler.js';

/** The store map of every node's check verdicts (`checkId|node`), each expiring unless its node refreshes it. */
export const VOTES_MAP = 'health.votes';

/** The store map of the nodes that run checks (`node`), each expiring with the votes' TTL unless its node refreshes it. */
export const CHECKERS_MAP = 'health.checkers';

/** `health.quorum`: how many observers must see a check down, how long a vote lives, how long a lost store is waited for. */
export interface QuorumSettings {
  /** Nodes that must observe a check down for it to be down (k of the live observers; fewer live observers: all of them). */
  readonly observers: number;
  /** A vote not refreshed for this long expires (ms, counted by the store: Redis `TIME`). */
  readonly voteTtlMs: number;
  /** After the store has been unreachable this long (ms), this node's own checks decide alone. */
  readonly graceMs: number;
  /** Nodes that run each check (r ≥ observers, chosen by rendezvous hashing over the live nodes); absent: every node runs every check. */
  readonly checkers?: number | undefined;
  /**
   * The longest monitor interval plus its timeout (ms): a check handed to a new owner has its
   * first vote within it. A late vote lingers at least this long (see {@link QuorumDecider}).
   */
  readonly longestCheckMs?: number | undefined;
}

/** How often (ms) the store's connection is looked at for the grace period. */
const GRACE_POLL_MS = 500;

/** The quorum defaults: 2 observers, votes live 15 s, 30 s of grace. */
export const QUORUM_DEFAULTS: QuorumSettings = { observers: 2, voteTtlMs: 15_000, graceMs: 30_000 };

/**
 * What a quorum decision rested on: `quorum` the live votes of a reachable store; `last-votes` the
 * votes last seen while the store is unreachable, within the grace period; `alone` this node's own
 * verdict after the grace period.
 */
export type QuorumBasis = 'quorum' | 'last-votes' | 'alone';

/** Called when a check's decided status changes (or is first decided): the status entered and its basis. */
export type QuorumDecisionListener = (status: HealthStatus, basis: QuorumBasis) => void;

/** One node's vote for one check. */
interface Vote extends CheckObservation {
  readonly node: string;
}

/**
 * Quorum health across the nodes that share a store (docs/PRODUCT.md §3 health, issue "many DNS
 * nodes"): this node's check runner writes its verdicts to a local map; each verdict becomes a
 * vote in the shared {@link VOTES_MAP} (refreshed every third of the TTL, so a node that is gone
 * stops counting once its votes expire); every node decides each check from the live votes and
 * writes the decision to the map the view publisher watches:
 *
 * - **down** when at least `min(observers, live voters)` voters see it down — one node's bad
 *   path does not take an endpoint down, and a check no live node can reach goes down;
 * - else **up** when a voter sees it up; else **unknown**.
 *
 * While the store is unreachable the votes last seen keep deciding (the last view); after
 * `graceMs` this node's own verdicts decide alone.
 *
 * **Late votes are not lost votes.** Another node's vote that leaves the store (its TTL ran out by
 * Redis time, or a reload after a stall no longer holds it) still counts for the linger —
 * `max(voteTtlMs, longestCheckMs)`, measured on this node's monotonic clock from when it saw the
 * vote go — and is dropped only if its node has not written it again by then. So a node whose
 * refresh is late (a starved event loop, a slow store write, a store that stalled and then expired
 * every vote at once) does not flip the decisions of the others — without this, one node's own
 * bad path decided the check down whenever the other nodes' votes expired together, and up again
 * at their next refresh — while a node that is gone stops counting after `voteTtlMs` plus the
 * linger (plus at most 500 ms). A refresh may so be late by up to `2 × voteTtlMs − voteTtlMs / 3`
 * (and the linger) before a decision changes. The same holds for the checker entries of r-of-n
 * checking: a late checker keeps its checks, so a slowed node does not move checks back and forth.
 *
 * With `checkers` (r), each check is run by r of the live nodes only — those
 * {@link rendezvousOwners} names for it, over the nodes with a live entry in {@link CHECKERS_MAP}
 * (refreshed with the votes) — and {@link owns} tells the check runner which; {@link onAssignment}
 * calls back when that changes (a node joined or its entry expired, this node began or stopped
 * deciding alone — then it runs every check). A node that stops running a check keeps its vote
 * until the vote expires, so the check's new owner has voted before the old vote goes.
 */
export class QuorumDecider {
  /** This node's own verdicts (the check runner writes here). */
  readonly local: StateMap<CheckObservation>;
  /** The decided verdicts (the view publisher watches them). */
  readonly decided: StateMap<CheckObservation>;
  private votes: StateMap<Vote> | undefined;
  private readonly byCheck = new Map<string, Map<string, Vote>>();
  private settings: QuorumSettings = QUORUM_DEFAULTS;
  private refreshTimer: unknown;
  private graceTimer: unknown;
  private alone = false;
  private checkers: StateMap<string> | undefined;
  /** The live checker nodes (sorted, joined by NUL) the current assignment was computed from. */
  private membership = '';
  private readonly owned = new Map<string, boolean>();
  private readonly assignmentListeners: (() => void)[] = [];
  /** Other nodes' votes (`checkId|node`) gone from the store, still counted until the linger ends. */
  private readonly lateVotes = new LateEntries();
  /** Other checker nodes whose entry left the store, still counted as live until the linger ends. */
  private readonly lateCheckers = new LateEntries();

  /** `onDecision`: told of each change of a decided status (the health metrics count them). */
  constructor(
    private readonly store: StateStore,
    private readonly clock: SchedulerClock,
    private readonly onDecision?: QuorumDecisionListener,
  ) {
    const mine = new InProcessStateStore();
    this.local = mine.map<CheckObservation>('health.local');
    this.decided = mine.map<CheckObservation>('health.decided');
    this.local.watch((id, value) => {
      // A check handed to other nodes: its vote stays until it expires (the new owners vote meanwhile).
      if (value !== undefined || this.owns(id)) this.vote(id, value);
      this.decide(id);
    });
  }

  /** Adopts `settings` (the vote map's TTL is the first configuration's: it is fixed per store map). */
  configure(settings: QuorumSettings): void {
    const checkersChanged = settings.checkers !== this.settings.checkers;
    this.settings = settings;
    if (!this.checkers) {
      this.checkers = this.store.map<string>(CHECKERS_MAP, { ttlMs: settings.voteTtlMs });
      this.checkers.set(this.store.node, this.store.node);
      this.checkers.watch((node, value) => {
        if (value === undefined && node !== this.store.node) this.lateCheckers.left(node, this.clock.monotonic());
        else this.lateCheckers.back(node);
        this.reassign(false);
      });
    }
    this.reassign(checkersChanged);
    if (!this.votes) {
      this.votes = this.store.map<Vote>(VOTES_MAP, { ttlMs: settings.voteTtlMs });
      for (const [key, v] of this.votes.entries()) this.track(key, v);
      this.votes.watch((key, v) => this.decide(this.track(key, v)));
      for (const [id, v] of this.local.entries()) this.vote(id, v);
    }
    for (const id of new Set([...this.byCheck.keys(), ...[...this.local.entries()].map(([id]) => id)])) this.decide(id);
  }

  /** Refreshes this node's votes (every third of the TTL) and watches the store's connection and the late votes (every 500 ms). */
  start(): void {
    const refresh = (): void => {
      this.checkers?.set(this.store.node, this.store.node);
      for (const [id, v] of this.local.entries()) this.vote(id, v);
      this.refreshTimer = this.clock.setTimer(refresh, Math.max(200, Math.floor(this.settings.voteTtlMs / 3)));
    };
    const grace = (): void => {
      this.watchGrace();
      this.dropLate();
      this.graceTimer = this.clock.setTimer(grace, GRACE_POLL_MS);
    };
    this.refreshTimer = this.clock.setTimer(refresh, Math.max(200, Math.floor(this.settings.voteTtlMs / 3)));
    this.graceTimer = this.clock.setTimer(grace, GRACE_POLL_MS);
  }

  stop(): void {
    if (this.refreshTimer !== undefined) this.clock.clearTimer(this.refreshTimer);
    if (this.graceTimer !== undefined) this.clock.clearTimer(this.graceTimer);
    this.refreshTimer = this.graceTimer = undefined;
  }

  /** Whether this node runs the check `checkId` now (always without `checkers`, and while deciding alone). */
  owns(checkId: string): boolean {
    if (!this.settings.checkers || this.alone) return true;
    let mine = this.owned.get(checkId);
    if (mine === undefined) {
      mine = rendezvousOwners(checkId, this.membership.split('\u0000'), this.settings.checkers).includes(this.store.node);
      this.owned.set(checkId, mine);
    }
    return mine;
  }

  /** Calls `listener` whenever {@link owns} may answer differently (the check runner then re-reads it). */
  onAssignment(listener: () => void): void {
    this.assignmentListeners.push(listener);
  }

  /** The live checker nodes now, sorted (this node included). */
  liveCheckers(): string[] {
    return this.membership.split('\u0000');
  }

  /** Recomputes the live checkers; tells the listeners when the assignment may have changed (`force`: the settings changed). */
  private reassign(force: boolean): void {
    const nodes = new Set<string>([this.store.node]);
    for (const [node] of this.checkers?.entries() ?? []) nodes.add(node);
    for (const node of this.lateCheckers.keys()) nodes.add(node);
    const membership = [...nodes].sort().join('\u0000');
    if (membership === this.membership && !force) return;
    this.membership = membership;
    this.owned.clear();
    for (const l of this.assignmentListeners) l();
  }

  /** Whether this node decides alone now (the store has been unreachable longer than the grace period). */
  get decidingAlone(): boolean {
    return this.alone;
  }

  /** How many checks this node's own verdict disagrees with the decided status of (its vote outvoted, or its path alone bad). */
  outvoted(): number {
    let n = 0;
    for (const [id, own] of this.local.entries()) {
      const decided = this.decided.get(id);
      if (decided && decided.status !== own.status) n++;
    }
    return n;
  }

  /** How long (ms) a vote or checker entry gone from the store still counts. */
  private get lingerMs(): number {
    return Math.max(this.settings.voteTtlMs, this.settings.longestCheckMs ?? 0);
  }

  /** How many other nodes' votes are late now: gone from the store, still counted (metrics). */
  get lateVoteCount(): number {
    return this.lateVotes.size;
  }

  /** Drops the votes and checker entries that stayed away for the linger, and decides their checks again. */
  private dropLate(): void {
    const now = this.clock.monotonic();
    for (const key of this.lateVotes.expire(now, this.lingerMs)) this.decide(this.forget(key));
    if (this.lateCheckers.expire(now, this.lingerMs).length > 0) this.reassign(false);
  }

  private watchGrace(): void {
    const c = this.store.connection();
    const alone = c.state === 'disconnected' && performance.now() - c.sinceMs >= this.settings.graceMs;
    if (alone === this.alone) return;
    this.alone = alone;
    this.reassign(true);
    for (const id of new Set([...this.byCheck.keys(), ...[...this.local.entries()].map(([id]) => id)])) this.decide(id);
  }

  private vote(id: string, value: CheckObservation | undefined): void {
    if (!this.votes) return;
    const key = `${id}|${this.store.node}`;
    if (value) this.votes.set(key, { status: value.status, sinceMs: value.sinceMs, node: this.store.node });
    else this.votes.delete(key);
  }

  /** Indexes a vote change by check (another node's vote gone from the store becomes late, still counted); returns the check id. */
  private track(key: string, vote: Vote | undefined): string {
    const cut = key.lastIndexOf('|');
    const id = key.slice(0, cut);
    const node = key.slice(cut + 1);
    let votes = this.byCheck.get(id);
    if (vote) {
      this.lateVotes.back(key);
      if (!votes) this.byCheck.set(id, (votes = new Map()));
      votes.set(node, vote);
    } else if (node !== this.store.node && votes?.has(node)) this.lateVotes.left(key, this.clock.monotonic());
    else this.forget(key);
    return id;
  }

  /** Removes the vote `key` (`checkId|node`) from the index; returns the check id. */
  private forget(key: string): string {
    const cut = key.lastIndexOf('|');
    const id = key.slice(0, cut);
    const votes = this.byCheck.get(id);
    if (votes) {
      votes.delete(key.slice(cut + 1));
      if (votes.size === 0) this.byCheck.delete(id);
    }
    return id;
  }

  private decide(id: string): void {
    const next = this.decision(id);
    const before = this.decided.get(id);
    if (!next) {
      if (before) this.decided.delete(id);
    } else if (!before || before.status !== next.status || before.sinceMs !== next.sinceMs) {
      this.decided.set(id, next);
      if (before?.status !== next.status) this.onDecision?.(next.status, this.basis());
    }
  }

  private basis(): QuorumBasis {
    if (this.alone) return 'alone';
    return this.store.connection().state === 'disconnected' ? 'last-votes' : 'quorum';
  }

  private decision(id: string): CheckObservation | undefined {
    const own = this.local.get(id);
    if (this.alone || !this.votes) return own;
    const votes = [...(this.byCheck.get(id)?.values() ?? [])];
    // This node's own verdict counts even before its vote came back through the store.
    if (own && !votes.some((v) => v.node === this.store.node)) votes.push({ ...own, node: this.store.node });
    if (votes.length === 0) return undefined;
    const count = (s: HealthStatus): number => votes.filter((v) => v.status === s).length;
    const status: HealthStatus = count('down') >= Math.min(this.settings.observers, votes.length) ? 'down' : count('up') > 0 ? 'up' : 'unknown';
    let sinceMs = 0;
    for (const v of votes) if (v.status === status && v.sinceMs > sinceMs) sinceMs = v.sinceMs;
    return { status, sinceMs };
  }
}
