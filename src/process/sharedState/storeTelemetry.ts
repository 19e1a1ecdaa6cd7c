import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { StateStore, StoreConnection } from '../../core/contracts/stateStore.js';
import { ClusterMembers, type MemberView } from './clusterMembers.js';
import type { StoreHooks } from './openStateStore.js';
import { RedisStateStore } from './redisStateStore.js';

/** The store as `/status` shows it. */
export interface StoreStatus {
  readonly kind: 'embedded' | 'redis';
  readonly state: StoreConnection['state'];
  /** Seconds in this state. */
  readonly forSeconds: number;
  /** The last error the Redis client reported, and how long ago (seconds); null when none yet. */
  readonly lastError: { readonly message: string; readonly secondsAgo: number } | null;
  /** Writes of this node not yet in Redis. */
  readonly pendingWrites: number;
  /** Every node with a live beat (this one included): its configuration hash and when it was last seen. */
  readonly nodes: readonly MemberView[];
}

/**
 * The state store's Prometheus metrics and `/status` view (src/process/sharedState/README.md,
 * "Observing the store"): `gslbd_store_connected`, `gslbd_store_reconnects_total`,
 * `gslbd_store_errors_total`, `gslbd_store_operation_seconds{operation}`,
 * `gslbd_store_pending_writes`, `gslbd_store_replica_keys{map}`, `gslbd_store_stale_seconds`
 * (how long the replica has not followed Redis: 0 while connected), `gslbd_store_nodes{config}`
 * (live nodes running the same or a different configuration).
 */
export class StoreTelemetry {
  private store: StateStore | undefined;
  private members: ClusterMembers | undefined;
  private connectedOnce = false;
  private lastError: { message: string; atMs: number } | undefined;
  private readonly reconnects: Counter;
  private readonly errors: Counter;
  private readonly latency: Histogram<'operation'>;

  constructor(
    registry: Registry,
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.reconnects = new Counter({
      name: 'gslbd_store_reconnects_total',
      help: 'Times the shared state store connected again after a loss',
      registers: [registry],
    });
    this.errors = new Counter({ name: 'gslbd_store_errors_total', help: 'Errors the shared state store client reported', registers: [registry] });
    this.latency = new Histogram({
      name: 'gslbd_store_operation_seconds',
      help: 'Time of shared state store operations (write, load, read, append, ping)',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    });
    // Read by the gauges' collect(), whose `this` is the gauge.
    const store = (): StateStore | undefined => this.store;
    const members = (): MemberView[] => this.members?.members() ?? [];
    const now = (): number => this.monotonic();
    new Gauge({
      name: 'gslbd_store_connected',
      help: '1 while the state store is reachable (or embedded), 0 while it is not',
      registers: [registry],
      collect() {
        this.set(store()?.connection().state === 'disconnected' ? 0 : 1);
      },
    });
    new Gauge({
      name: 'gslbd_store_stale_seconds',
      help: 'Seconds the replica has not followed the shared store (0 while connected)',
      registers: [registry],
      collect() {
        const c = store()?.connection();
        this.set(c?.state === 'disconnected' ? (now() - c.sinceMs) / 1000 : 0);
      },
    });
    new Gauge({
      name: 'gslbd_store_pending_writes',
      help: 'Writes of this node not yet in the shared store',
      registers: [registry],
      collect() {
        const s = store();
        this.set(s instanceof RedisStateStore ? s.pendingWrites : 0);
      },
    });
    new Gauge({
      name: 'gslbd_store_replica_keys',
      help: 'Keys of each map in this node’s replica of the shared store',
      labelNames: ['map'],
      registers: [registry],
      collect() {
        this.reset();
        const s = store();
        if (s instanceof RedisStateStore) for (const [map, size] of s.replicaSizes()) this.set({ map }, size);
      },
    });
    new Gauge({
      name: 'gslbd_store_nodes',
      help: 'Live nodes sharing the store, by whether they run this node’s configuration (same) or not (different)',
      labelNames: ['config'],
      registers: [registry],
      collect() {
        const m = members();
        this.set({ config: 'same' }, m.filter((n) => n.sameConfig).length);
        this.set({ config: 'different' }, m.filter((n) => !n.sameConfig).length);
      },
    });
  }

  /** The hooks to open the store with. */
  hooks(log: (connection: StoreConnection) => void): StoreHooks {
    return {
      onConnection: (c) => {
        if (c.state === 'connected') {
          if (this.connectedOnce) this.reconnects.inc();
          this.connectedOnce = true;
        }
        log(c);
      },
      onLatency: (operation, ms) => this.latency.observe({ operation }, ms / 1000),
      onError: (message) => {
        this.errors.inc();
        this.lastError = { message, atMs: this.monotonic() };
      },
    };
  }

  /** Starts this node's membership (its beat carries `configHash()`, read at every beat so reloads show). */
  attach(store: StateStore, configHash: () => string): void {
    this.store = store;
    this.members = new ClusterMembers(store, configHash, this.monotonic);
  }

  describe(): StoreStatus {
    const store = this.store;
    const c = store?.connection() ?? { state: 'embedded', sinceMs: this.monotonic() };
    const now = this.monotonic();
    return {
      kind: store instanceof RedisStateStore ? 'redis' : 'embedded',
      state: c.state,
      forSeconds: c.state === 'embedded' ? 0 : Math.round(now - c.sinceMs) / 1000,
      lastError: this.lastError ? { message: this.lastError.message, secondsAgo: Math.round(now - this.lastError.atMs) / 1000 } : null,
      pendingWrites: store instanceof RedisStateStore ? store.pendingWrites : 0,
      nodes: this.members?.members() ?? [],
    };
  }

  stop(): void {
    this.members?.stop();
  }
}
