import { hostname } from 'node:os';
import { z } from 'zod';

const sentinelSchema = z.strictObject({
  host: z.string().min(1).describe('Host name or address of a Redis Sentinel.'),
  port: z.number().int().min(1).max(65535).default(26379).describe('Port of the Redis Sentinel; default 26379.'),
});
const clusterNodeSchema = z.strictObject({
  host: z.string().min(1).describe('Host name or address of a Redis Cluster node.'),
  port: z.number().int().min(1).max(65535).default(6379).describe('Port of the Redis Cluster node; default 6379.'),
});

/**
 * `store.redis`: the shared state store (src/process/sharedState/README.md). Either `url` (a
 * standalone Redis; `rediss://` for TLS; `redis://user:password@host:port/db` for an ACL user) or
 * `sentinels` with `masterName` (the client asks the sentinels for the primary and follows a
 * failover), or `cluster` (seed nodes of a Redis Cluster: the client learns the slots from them and
 * follows a replica's promotion).
 */
export const redisStoreSchema = z
  .strictObject({
    url: z
      .string()
      .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
      .optional()
      .describe('URL of a standalone Redis (redis://, or rediss:// for TLS; user:password@ for an ACL user); one of url, sentinels, cluster.'),
    sentinels: z
      .array(sentinelSchema)
      .min(1)
      .optional()
      .describe('Redis Sentinels to ask for the primary (followed across a failover); needs masterName; one of url, sentinels, cluster.'),
    masterName: z.string().min(1).optional().describe('Name of the primary the sentinels watch; required with sentinels.'),
    /** Some nodes of a Redis Cluster (every key is under one hash tag, so one slot's master holds them all). */
    cluster: z
      .array(clusterNodeSchema)
      .min(1)
      .optional()
      .describe('Seed nodes of a Redis Cluster (the client learns the slots from them); one of url, sentinels, cluster.'),
    /** ACL user and password (for the primary and replicas; sentinels without auth). */
    username: z.string().min(1).optional().describe('Redis ACL user name for the primary and replicas (sentinels without auth).'),
    password: z.string().min(1).optional().describe('Redis ACL password for the primary and replicas (sentinels without auth).'),
    /** TLS to the primary (implied by `rediss://`). */
    tls: z.boolean().default(false).describe('Use TLS to the primary (implied by rediss://); default false.'),
    /** PEM file (absolute path, or relative to the working directory) of the authorities trusted for the server's TLS certificate; implies TLS (default with `rediss://`: the system's). */
    tlsCaFile: z
      .string()
      .min(1)
      .optional()
      .describe('PEM file of the authorities trusted for the Redis TLS certificate (absolute, or relative to the working directory); implies TLS.'),
    /** Key prefix shared by the nodes of one deployment (inside a Cluster hash tag). */
    namespace: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/)
      .default('gslbd')
      .describe('Key prefix shared by the nodes of one deployment; default "gslbd".'),
    /** This node's name; unique among the nodes (default: the host name). */
    node: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]+$/)
      .default(() => hostname())
      .describe("This node's name, unique among the nodes; default the host name."),
    /** Changes kept in the change log. */
    logLength: z.number().int().min(1000).default(100_000).describe('Changes kept in the shared change log, at least 1000; default 100000.'),
    /** How long start-up waits for the first synchronisation before answering from local state (s). */
    connectTimeoutSeconds: z
      .number()
      .min(0)
      .max(60)
      .default(2)
      .describe('Seconds start-up waits for the first synchronisation before answering from local state, 0–60; default 2.'),
  })
  .refine((r) => [r.url, r.sentinels, r.cluster].filter((x) => x !== undefined).length === 1, { message: 'set one of url, sentinels, cluster' })
  .refine((r) => r.sentinels === undefined || r.masterName !== undefined, { message: 'sentinels need masterName' });

/** `store`: where shared state lives; absent, every node keeps its own in process (the embedded default). */
export const storeSchema = z.strictObject({
  redis: redisStoreSchema.describe('The Redis shared state store: a standalone Redis (url), Sentinels, or a Redis Cluster.'),
});

export type StoreConfig = z.output<typeof storeSchema>;
export type RedisStoreConfig = z.output<typeof redisStoreSchema>;
