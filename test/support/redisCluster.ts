import { spawnSync } from 'node:child_process';
import { freePort } from './freePort.js';
import { startRedis, type RedisPeer } from './redisServer.js';
import { waitFor } from './waitFor.js';

/** A real Redis Cluster this test started on loopback (`redis-server --cluster-enabled yes` nodes joined by `redis-cli --cluster create`). */
export interface RedisClusterPeer {
  /** Every node, masters first as created (each replica follows a master chosen by `redis-cli`). */
  readonly nodes: readonly RedisPeer[];
  /** `host`/`port` of every node (the client's seed list). */
  readonly seeds: readonly { host: string; port: number }[];
  /** The node serving `key`'s slot as master now (asked from a live node's `CLUSTER SLOTS`). */
  masterOf(key: string): RedisPeer;
  /** Resolves once every live node reports `cluster_state:ok` and `key`'s slot has a live master. */
  healthy(key: string, timeoutMs: number): Promise<void>;
}

/**
 * Starts `masters` cluster nodes plus `replicasPerMaster` replicas each on free ports of
 * 127.0.0.1 (persistence off, `cluster-node-timeout` `nodeTimeoutMs` so a dead master is replaced
 * quickly; the bus port is picked free too, since port + 10000 may not exist) and creates the
 * cluster with `redis-cli --cluster create … --cluster-yes`. Stop them with `stopAllRedis`.
 * @throws Error when redis-server or redis-cli is missing, or the cluster is not ok within 20 s.
 */
export async function startRedisCluster(masters = 3, replicasPerMaster = 1, nodeTimeoutMs = 1000): Promise<RedisClusterPeer> {
  if (spawnSync('redis-cli', ['--version']).error) throw new Error('redis-cli is missing: run bash test/setup.sh (apt package redis-tools)');
  const nodes: RedisPeer[] = [];
  for (let i = 0; i < masters * (1 + replicasPerMaster); i++)
    nodes.push(
      await startRedis([
        ['cluster-enabled', 'yes'],
        ['cluster-config-file', 'nodes.conf'],
        ['cluster-node-timeout', String(nodeTimeoutMs)],
        ['cluster-port', String(await freePort())],
        // A replica takes over however long it was cut from its master (the test kills masters on purpose).
        ['cluster-replica-validity-factor', '0'],
      ]),
    );
  const created = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'],
    { encoding: 'utf8', timeout: 30_000 },
  );
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
  const byPort = new Map(nodes.map((n) => [n.port, n]));
  const live = (): RedisPeer[] => nodes.filter((n) => n.cli('PING') === 'PONG');
  const cluster: RedisClusterPeer = {
    nodes,
    seeds: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    masterOf: (key) => {
      const asker = live()[0]!;
      const slot = Number(asker.cli('CLUSTER', 'KEYSLOT', key));
      const out = spawnSync('redis-cli', ['-p', String(asker.port), '--json', 'CLUSTER', 'SLOTS'], { encoding: 'utf8' }).stdout;
      const ranges = JSON.parse(out) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
      const range = ranges.find(([from, to]) => from <= slot && slot <= to);
      if (!range) throw new Error(`slot ${slot} of ${key} has no master`);
      return byPort.get(range[2][1])!;
    },
    healthy: async (key, timeoutMs) => {
      await waitFor(
        'the Redis Cluster ok',
        () => {
          const up = live();
          if (!up.every((n) => n.cli('CLUSTER', 'INFO').includes('cluster_state:ok'))) return false;
          try {
            return up.includes(cluster.masterOf(key));
          } catch {
            return false;
          }
        },
        timeoutMs,
        { everyMs: 100 },
      );
    },
  };
  await cluster.healthy('{gslbd}', 20_000);
  return cluster;
}
