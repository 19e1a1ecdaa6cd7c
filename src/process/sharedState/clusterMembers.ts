import { createHash } from 'node:crypto';
import type { StateMap, StateStore } from '../../core/contracts/stateStore.js';

/** The state-store map of the nodes sharing the store: node → {@link MemberBeat}; a node's entry expires {@link MEMBER_TTL_MS} after its last beat. */
export const MEMBERS_MAP = 'store.nodes';

/** How often (ms) a node writes its beat. */
export const MEMBER_BEAT_MS = 5000;

/** How long (ms) a node's beat lives: three beats missed and the node is gone from every node's view (Redis `TIME` decides). */
export const MEMBER_TTL_MS = 15_000;

/** What each node writes about itself. */
export interface MemberBeat {
  /** {@link configurationHash} of the configuration it runs. */
  readonly configHash: string;
  /** Increases with every beat (so the value changes and every node's watcher sees the beat). */
  readonly beat: number;
}

/** One node as this node sees it (`/status`). */
export interface MemberView {
  readonly node: string;
  readonly configHash: string;
  /** Whether it runs the configuration this node runs (same {@link configurationHash}). */
  readonly sameConfig: boolean;
  /** Seconds since this node last saw its beat (this node's monotonic clock: no two clocks are compared). */
  readonly lastSeenSecondsAgo: number;
}

/**
 * The content hash nodes compare (issue "the content hash of each node's loaded configuration, so
 * nodes that disagree are visible"): SHA-256 of the validated configuration as JSON without the
 * sections that differ per node by design (`listeners`, `logging`, `store`: the node's name and
 * addresses), first 16 hex digits.
 */
export function configurationHash(config: Readonly<Record<string, unknown>>): string {
  const shared = Object.fromEntries(Object.entries(config).filter(([k]) => k !== 'listeners' && k !== 'logging' && k !== 'store'));
  const json = JSON.stringify(shared, (_k, v: unknown) => (v instanceof Map ? [...v] : v instanceof Set ? [...v] : typeof v === 'bigint' ? String(v) : v));
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

/**
 * This node's membership among the nodes sharing a store: it writes a beat with its
 * configuration hash every {@link MEMBER_BEAT_MS} to {@link MEMBERS_MAP} (expiring), and notes when
 * it saw each node's beat. With the embedded store it is the only member.
 */
export class ClusterMembers {
  private readonly map: StateMap<MemberBeat>;
  private readonly seenAt = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private beat = 0;

  constructor(
    private readonly store: StateStore,
    private readonly configHash: () => string,
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.map = store.map<MemberBeat>(MEMBERS_MAP, { ttlMs: MEMBER_TTL_MS });
    this.map.watch((node, value) => {
      if (value === undefined) this.seenAt.delete(node);
      else this.seenAt.set(node, this.monotonic());
    });
    this.write();
    this.timer = setInterval(() => this.write(), MEMBER_BEAT_MS);
    this.timer.unref();
  }

  /** Every node with a live beat, this one included, by name. */
  members(): MemberView[] {
    const mine = this.configHash();
    const now = this.monotonic();
    return [...this.map.entries()]
      .map(([node, b]) => ({
        node,
        configHash: b.configHash,
        sameConfig: b.configHash === mine,
        lastSeenSecondsAgo: Math.round((now - (this.seenAt.get(node) ?? now)) / 100) / 10,
      }))
      .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private write(): void {
    this.map.set(this.store.node, { configHash: this.configHash(), beat: ++this.beat });
  }
}
