import type { Cluster, Redis } from 'ioredis';

/** A connection to a standalone Redis (directly or through Sentinel) or to a Redis Cluster (ioredis `Cluster`): the commands the store sends exist on both. */
export type RedisClient = Redis | Cluster;
