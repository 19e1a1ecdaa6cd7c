import { InProcessStateStore, type StateMap, type StateStore } from '../../core/contracts/stateStore.js';
import type { HealthStatus } from '../../core/views/healthView.js';
import type { CheckObservation } from './healthStore.js';
import type { SchedulerClock } from './scheduler.js';

/** The store map of every node's check verdicts (`checkId|node`), each expiring unless its node refreshes it. */
export const VOTES_MAP = 'health.votes';

/** `health.quorum`: how many observers must see a check down, how long a vote lives, how long a lost store is waited for. */
export interface QuorumSettings {
  /** Nodes that must observe a check down for it to be down (k of the live observers; fewer live observers: all of them). */
  readonly observers: number;
  /** A vote not refreshed for this long expires (ms, counted by the store: Redis `TIME`). */
  readonly voteTtlMs: number;
  /** After the store has been unreachable this long (ms), this node's own checks decide alone. */
  readonly graceMs: number;
}

/** How often (ms) the store's connection is looked at for the grace period. */
const GRACE_POLL_MS = 500;

/** The quorum defaults: 2 observers, votes live 15 s, 30 s of grace. */
export const QUORUM_DEFAULTS: QuorumSettings = { observers: 2, voteTtlMs: 15_000, graceMs: 30_000 };

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

  constructor(
    private readonly store: StateStore,
    private readonly clock: SchedulerClock,
  ) {
    const mine = new InProcessStateStore();
    this.local = mine.map<CheckObservation>('health.local');
    this.decided = mine.map<CheckObservation>('health.decided');
    this.local.watch((id, value) => {
      this.vote(id, value);
      this.decide(id);
    });
  }

  /** Adopts `settings` (the vote map's TTL is the first configuration's: it is fixed per store map). */
  configure(settings: QuorumSettings): void {
    this.settings = settings;
    if (!this.votes) {
      this.votes = this.store.map<Vote>(VOTES_MAP, { ttlMs: settings.voteTtlMs });
      for (const [key, v] of this.votes.entries()) this.track(key, v);
      this.votes.watch((key, v) => this.decide(this.track(key, v)));
      for (const [id, v] of this.local.entries()) this.vote(id, v);
    }
    for (const id of new Set([...this.byCheck.keys(), ...[...this.local.entries()].map(([id]) => id)])) this.decide(id);
  }

  /** Refreshes this node's votes (every third of the TTL) and watches the store's connection (every 500 ms). */
  start(): void {
    const refresh = (): void => {
      for (const [id, v] of this.local.entries()) this.vote(id, v);
      this.refreshTimer = this.clock.setTimer(refresh, Math.max(200, Math.floor(this.settings.voteTtlMs / 3)));
    };
    const grace = (): void => {
      this.watchGrace();
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

  /** Whether this node decides alone now (the store has been unreachable longer than the grace period). */
  get decidingAlone(): boolean {
    return this.alone;
  }

  private watchGrace(): void {
    const c = this.store.connection();
    const alone = c.state === 'disconnected' && performance.now() - c.sinceMs >= this.settings.graceMs;
    if (alone === this.alone) return;
    this.alone = alone;
    for (const id of new Set([...this.byCheck.keys(), ...[...this.local.entries()].map(([id]) => id)])) this.decide(id);
  }

  private vote(id: string, value: CheckObservation | undefined): void {
    if (!this.votes) return;
    const key = `${id}|${this.store.node}`;
    if (value) this.votes.set(key, { status: value.status, sinceMs: value.sinceMs, node: this.store.node });
    else this.votes.delete(key);
  }

  /** Indexes a vote change by check; returns the check id. */
  private track(key: string, vote: Vote | undefined): string {
    const cut = key.lastIndexOf('|');
    const id = key.slice(0, cut);
    const node = key.slice(cut + 1);
    let votes = this.byCheck.get(id);
    if (vote) {
      if (!votes) this.byCheck.set(id, (votes = new Map()));
      votes.set(node, vote);
    } else if (votes) {
      votes.delete(node);
      if (votes.size === 0) this.byCheck.delete(id);
    }
    return id;
  }

  private decide(id: string): void {
    const next = this.decision(id);
    const before = this.decided.get(id);
    if (!next) {
      if (before) this.decided.delete(id);
    } else if (!before || before.status !== next.status || before.sinceMs !== next.sinceMs) this.decided.set(id, next);
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
