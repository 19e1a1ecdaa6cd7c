import type { Cluster, Redis } from 'ioredis';

/** A connection to a standalone Redis (directly or through Sentinel) or to a Redis Cluster (ioredis `Cluster`): the commands the store sends exist on both. */
export type RedisClient = Redis | Cluster;

/**
 * Whether `client` is a Redis Cluster connection. ioredis's own `isCluster` flag, not
 * `instanceof Cluster`: an `instanceof` needs ioredis loaded as a value, which an engine without a
 * store must not pay at start (src/process/sharedState/openStateStore.ts loads it on first use).
 */
export function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}
