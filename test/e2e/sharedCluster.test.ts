import test from 'ava';
import { startRedisCluster } from '../support/redisCluster.js';
import { stopAllRedis } from '../support/redisServer.js';
import {
  ecsAnswers as answers,
  ecsClients,
  postOverride as override,
  SHARED_ADDRESS as ADDRESS,
  sharedConfig,
  startSharedEngine as engine,
} from '../support/sharedDeployment.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Two engines on a real Redis Cluster (3 masters + 3 replicas, src/process/sharedState/README.md
 * "Redis Cluster"): 150 ECS clients get the same data center from both; an override posted to one
 * reaches the other; the master of the store's slot is killed and its replica promoted while both
 * engines answer a steady stream of queries (none fails), and an override posted after the
 * failover reaches the other engine too. Redis 7 delays a replica's first synchronisation by 5 s
 * (diskless sync), so the promoted replica has usually lost the namespace: both nodes write their
 * replicas back, and the override removed on b must not come back from a's stale copy.
 */

test.after.always(stopAllRedis);

test('two engines on a Redis Cluster agree, and follow a failover of the store’s master without a failed answer', async (t) => {
  const cluster = await startRedisCluster(3, 1, 1000);
  const config = (node: string): string =>
    sharedConfig(`{ cluster: ${JSON.stringify(cluster.seeds)}, node: ${node}, namespace: cl, connectTimeoutSeconds: 10 }`);
  const [a, b] = [await engine(t, config('a')), await engine(t, config('b'))];
  const clients = ecsClients(150);
  t.deepEqual(await answers(b, clients), await answers(a, clients), 'node b answers every client as node a does');

  t.is(await override(a, 'ap', 'force-down'), 200);
  await waitFor('the override on node b', async () => (await answers(b, [clients[0]!]))[0] === `0:${ADDRESS.eu}`, 10_000);
  const after = await answers(a, clients);
  t.deepEqual(await answers(b, clients), after, 'after the override, too');
  t.is(after.filter((x) => x === `0:${ADDRESS.ap}`).length, 0);

  // Queries through both engines for the whole failover: every one answered, none failed.
  let stop = false;
  const seen = new Map<string, number>();
  const load = Promise.all(
    [a, b].map(async (n) => {
      while (!stop) {
        for (const r of await answers(n, clients.slice(0, 30))) seen.set(r.split(':')[0]!, (seen.get(r.split(':')[0]!) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 20));
      }
    }),
  );
  const master = cluster.masterOf('{cl}:log');
  await master.kill();
  const killed = Date.now();
  await cluster.healthy('{cl}:log', 30_000);
  t.not(cluster.masterOf('{cl}:log'), master, 'a replica was promoted');
  t.is(await override(b, 'ap', 'none'), 200);
  await waitFor('an override posted to b after the failover reaches a', async () => (await answers(a, [clients[0]!]))[0] === `0:${ADDRESS.ap}`, 30_000);
  t.log(`master killed → an override posted to b answered by a after ${Date.now() - killed} ms`);
  stop = true;
  await load;
  t.log(`answers during the failover by rcode: ${JSON.stringify(Object.fromEntries(seen))}`);
  t.deepEqual([...seen.keys()], ['0'], 'only NOERROR answers during the failover');
  t.true((seen.get('0') ?? 0) > 100);
  t.deepEqual(await answers(b, clients), await answers(a, clients), 'the nodes agree after the failover');
});
