import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as IoRedis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { InProcessStateStore, type StateStore, type StoreConnection } from '../../core/contracts/stateStore.js';
import type { RedisClient } from './redisClient.js';
import { RedisStateStore } from './redisStateStore.js';
import type { RedisStoreConfig, StoreConfig } from './storeSchema.js';

/** Hooks an opened store reports to (logs, metrics). */
export interface StoreHooks {
  readonly onConnection?: (connection: StoreConnection) => void;
  readonly onLatency?: (operation: string, ms: number) => void;
  readonly onError?: (message: string) => void;
}

/** An opened store with how to wait for its first synchronisation and how to close it. */
export interface OpenedStore {
  readonly store: StateStore;
  /** Resolves true once synchronised with the shared store, false after the configured wait (the embedded store is ready at once). */
  ready(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * The store `config` names: the {@link InProcessStateStore} without `store`, else a
 * {@link RedisStateStore} over ioredis connections (standalone, through Sentinel, or to a Redis Cluster).
 */
export function openStateStore(config: StoreConfig | undefined, hooks: StoreHooks = {}): OpenedStore {
  if (!config) return { store: new InProcessStateStore(), ready: () => Promise.resolve(true), stop: () => Promise.resolve() };
  const r = config.redis;
  const store = new RedisStateStore({
    connect: (blockMs) => connectRedis(r, blockMs),
    node: r.node,
    namespace: `{${r.namespace}}`,
    logLength: r.logLength,
    ...hooks,
  });
  return { store, ready: () => store.ready(r.connectTimeoutSeconds * 1000), stop: () => store.stop() };
}

/**
 * One ioredis connection as `r` says. Commands are never queued while disconnected (the store
 * keeps its own dirty set) and fail after 2 s (plus `blockMs` for the connection that makes
 * blocking reads), so no caller waits on a lost Redis; reconnection backs off from 50 ms to 2 s.
 * With `cluster`, an ioredis `Cluster` with the same options per node: it follows `MOVED` and a
 * replica's promotion by refreshing its slot table on a redirection; the store's heartbeat
 * refreshes it every second besides ({@link RedisStateStore}).
 * @throws Error when `tlsCaFile` cannot be read.
 */
export function connectRedis(r: RedisStoreConfig, blockMs = 0): RedisClient {
  // Loaded here, not at start: ioredis costs about 250 ms of CPU to load, which an engine without
  // `store` must not pay at every start (issue 26: start-up time).
  const { Cluster, Redis } = createRequire(import.meta.url)('ioredis') as typeof IoRedis;
  const common: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 2000 + blockMs,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(2000, 50 * 2 ** Math.min(attempt, 6)),
    ...(r.username ? { username: r.username } : {}),
    ...(r.password ? { password: r.password } : {}),
    // A CA file implies TLS; `rediss://` alone uses the system's authorities.
    ...(r.tls || r.tlsCaFile ? { tls: r.tlsCaFile ? { ca: readFileSync(r.tlsCaFile) } : {} } : {}),
  };
  if (r.cluster)
    return new Cluster(r.cluster, {
      enableOfflineQueue: false,
      redisOptions: common,
      // Off: ioredis schedules its next round when a refresh ends, even one that was in flight when
      // the client was disconnected, and then refreshes for ever (a stopped store kept its process
      // alive). The store's heartbeat refreshes the slot table instead (RedisStateStore).
      slotsRefreshInterval: 0,
      slotsRefreshTimeout: 1000,
      // Retries a command redirected or refused during a failover after 100 ms (at most twice: the store's own dirty set retries later anyway).
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      maxRedirections: 4,
      clusterRetryStrategy: (attempt) => Math.min(2000, 50 * 2 ** Math.min(attempt, 6)),
    });
  if (r.sentinels)
    return new Redis({
      ...common,
      sentinels: r.sentinels,
      name: r.masterName!,
      sentinelRetryStrategy: (attempt: number) => Math.min(2000, 50 * 2 ** Math.min(attempt, 6)),
    });
  return new Redis(r.url!, common);
}
