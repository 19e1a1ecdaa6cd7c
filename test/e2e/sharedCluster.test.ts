import test from 'ava';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { udpQuery } from '../support/dnsClient.js';
import { startRedisCluster, type RedisClusterPeer } from '../support/redisCluster.js';
import { stopAllRedis } from '../support/redisServer.js';
import { seededRandom } from '../support/seededRandom.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Two engines on a real Redis Cluster (3 masters + 3 replicas, src/process/sharedState/README.md
 * "Redis Cluster"): 150 ECS clients get the same data center from both; an override posted to one
 * reaches the other; the master of the store's slot is killed and its replica promoted while both
 * engines answer a steady stream of queries (none fails), and an override posted after the
 * failover reaches the other engine too.
 */

test.after.always(stopAllRedis);

const ADDRESS = { ap: '203.0.113.10', eu: '198.51.100.10', us: '192.0.2.10' } as const;
const TOKEN = 'shared-cluster-token-0123456789';

function config(node: string, cluster: RedisClusterPeer): string {
  return `
logging: { level: silent }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} }
store:
  redis: { cluster: ${JSON.stringify(cluster.seeds)}, node: ${node}, namespace: cl, connectTimeoutSeconds: 10 }
geo: { sources: [] }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters: [{ name: ap }, { name: eu }, { name: us }]
services:
  - name: web
    endpoints:
      - { dc: ap, address: ${ADDRESS.ap} }
      - { dc: eu, address: ${ADDRESS.eu} }
      - { dc: us, address: ${ADDRESS.us} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy:
      type: static
      pickDcCount: 1
      balanceAlgorithm: top-1
      rules:
        - { when: { clientSubnet: [10.0.0.0/10] }, dcs: [ap, eu] }
        - { when: { clientSubnet: [10.64.0.0/10] }, dcs: [eu, us] }
        - { dcs: [us, ap] }
`;
}

async function engine(t: { teardown(f: () => Promise<void>): void }, text: string): Promise<RunningGslbd> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-shared-cluster-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, text);
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return running;
}

/** `rcode:addresses` of the A answer each ECS client gets from `node` (50 queries in flight at most). */
async function answers(node: RunningGslbd, clients: readonly string[]): Promise<string[]> {
  const out: string[] = new Array<string>(clients.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < clients.length) {
        const i = next++;
        const r = await udpQuery(node.dns.bound[0]!, { name: 'www.example.test', type: 'A', edns: { ecs: clients[i]! } });
        const a = (r.packet.answers ?? []).filter((x) => x.type === 'A').map((x) => String((x as { data: unknown }).data));
        out[i] = `${r.rcode}:${a.join(',')}`;
      }
    }),
  );
  return out;
}

async function override(node: RunningGslbd, dc: keyof typeof ADDRESS, value: 'force-down' | 'none'): Promise<number> {
  const posted = await fetch(`http://127.0.0.1:${node.admin!.port}/health/override`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: `web/${dc}/${ADDRESS[dc]}`, override: value }),
  });
  return posted.status;
}

test('two engines on a Redis Cluster agree, and follow a failover of the store’s master without a failed answer', async (t) => {
  const cluster = await startRedisCluster(3, 1, 1000);
  const [a, b] = [await engine(t, config('a', cluster)), await engine(t, config('b', cluster))];
  const random = seededRandom(21);
  const clients = Array.from({ length: 150 }, (_, i) => {
    const first = i % 3 === 2 ? 11 + Math.floor(random() * 100) : 10;
    const second = i % 3 === 0 ? Math.floor(random() * 64) : i % 3 === 1 ? 64 + Math.floor(random() * 64) : Math.floor(random() * 256);
    return `${first}.${second}.${Math.floor(random() * 256)}.0/24`;
  });
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
