import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDnsperfOutput, type DnsperfResult } from '../bench/harness/dnsperf.js';
import { udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines } from '../support/engineProcess.js';
import { startRedisCluster } from '../support/redisCluster.js';
import { startRedis, startSentinel, stopAllRedis } from '../support/redisServer.js';
import { startSharedEngine as engine } from '../support/sharedDeployment.js';
import { waitFor } from '../support/waitFor.js';

/**
 * dnsperf through one engine of two sharing a real redis-server while Redis is killed and then
 * restarted empty (src/process/sharedState/README.md "Failure semantics"): every query is
 * answered, only NOERROR, and the answers stay those of the last known state (an override posted
 * before the fault); after the restart the nodes repopulate Redis and the override is still there.
 * The same while the master of the store's slot in a Redis Cluster (3 masters + 3 replicas) is
 * killed and its replica promoted; while Sentinel fails the primary over to its replica; and while a
 * third node (an engine process) is killed with SIGKILL.
 */

test.after.always(async () => {
  await stopAllEngines();
  await stopAllRedis();
});

const TOKEN = 'shared-fault-load-token-0123456789';
const ADDRESS = { ap: '203.0.113.10', eu: '198.51.100.10' } as const;
const LOAD_SECONDS = 8;

function config(node: string, store: string, logLevel: 'silent' | 'info' = 'silent'): string {
  return `
logging: { level: ${logLevel} }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} }
store:
  redis: { ${store}, node: ${node}, namespace: fault, connectTimeoutSeconds: 10 }
geo: { sources: [] }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters: [{ name: ap }, { name: eu }]
services:
  - name: web
    endpoints:
      - { dc: ap, address: ${ADDRESS.ap} }
      - { dc: eu, address: ${ADDRESS.eu} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static, pickDcCount: 1, balanceAlgorithm: top-1, rules: [{ dcs: [ap, eu] }] }
`;
}

function dnsperf(port: number, queryFile: string): Promise<DnsperfResult> {
  return new Promise((resolve, reject) => {
    const c = spawn(
      'dnsperf',
      ['-s', '127.0.0.1', '-p', String(port), '-d', queryFile, '-l', String(LOAD_SECONDS), '-Q', '400', '-c', '2', '-q', '20', '-t', '5'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('error', (e) => reject(new Error(`dnsperf is missing: run bash test/setup.sh (apt package dnsperf): ${e.message}`)));
    c.on('exit', () => {
      try {
        resolve(parseDnsperfOutput(out));
      } catch (e) {
        reject(new Error(`${(e as Error).message}:\n${out}`));
      }
    });
  });
}

/**
 * Two engines on `store`; an override posted to b; dnsperf through a while `fault` runs (it is
 * handed a sampler of a's answers to call between its steps); asserts and returns nothing else.
 */
async function underLoad(t: ExecutionContext, store: string, fault: (sample: (ms: number) => Promise<void>) => Promise<void>, label: string): Promise<void> {
  const [a, b] = [await engine(t, config('a', store)), await engine(t, config('b', store))];
  const posted = await fetch(`http://127.0.0.1:${b.admin!.port}/health/override`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: `web/ap/${ADDRESS.ap}`, override: 'force-down' }),
  });
  t.is(posted.status, 200);
  const answerOfA = async (): Promise<string> => {
    const r = await udpQuery(a.dns.bound[0]!, { name: 'www.example.test', type: 'A' });
    return `${r.rcode}:${(r.packet.answers ?? []).map((x) => String((x as { data: unknown }).data)).join(',')}`;
  };
  await waitFor('the override posted to b answered by a', async () => (await answerOfA()) === `0:${ADDRESS.eu}`, 10_000);

  const dir = mkdtempSync(join(tmpdir(), 'gslbd-fault-load-q-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const queryFile = join(dir, 'queries');
  writeFileSync(queryFile, 'www.example.test A\n');
  const load = dnsperf(a.dns.bound[0]!.port, queryFile);
  const sampled: string[] = [];
  await fault(async (ms) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      sampled.push(await answerOfA());
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  const result = await load;
  t.log(`dnsperf through node a, ${label}: ${result.queriesPerSecond.toFixed(0)} queries/s, ${JSON.stringify(result.rcodes)}, lost ${result.lost}`);
  t.deepEqual(Object.keys(result.rcodes), ['NOERROR'], 'only NOERROR (no SERVFAIL, no NXDOMAIN)');
  t.is(result.lost, 0);
  t.true(result.completed > 0);
  t.deepEqual(new Set(sampled), new Set([`0:${ADDRESS.eu}`]), `the last known state answered throughout (${sampled.length} sampled answers)`);
}

test.serial('dnsperf while Redis is killed and restarted empty: every query answered NOERROR from the last known state', async (t) => {
  const redis = await startRedis();
  await underLoad(
    t,
    `url: "${redis.url}"`,
    async (sample) => {
      await sample(1500);
      await redis.kill();
      await sample(2500);
      await redis.restart();
      await sample(1500);
    },
    'Redis killed then restarted empty',
  );
  await waitFor(
    'Redis repopulated with the override',
    () => redis.cli('HGET', '{fault}:map:health.overrides', `web/ap/${ADDRESS.ap}`) === '"force-down"',
    15_000,
  );
});

test.serial('dnsperf while the store slot’s master in a Redis Cluster is killed and its replica promoted', async (t) => {
  const cluster = await startRedisCluster(3, 1, 1000);
  const master = cluster.masterOf('{fault}:log');
  await underLoad(
    t,
    `cluster: ${JSON.stringify(cluster.seeds)}`,
    async (sample) => {
      await sample(1000);
      await master.kill();
      await sample(4000);
    },
    'the Cluster master killed, its replica promoted',
  );
  await cluster.healthy('{fault}:log', 30_000);
  t.not(cluster.masterOf('{fault}:log'), master);
});

test.serial('dnsperf while Sentinel fails the primary over to its replica', async (t) => {
  const primary = await startRedis();
  const replica = await startRedis([['replicaof', '127.0.0.1', String(primary.port)]]);
  await waitFor('replica in sync', () => replica.cli('INFO', 'replication').includes('master_link_status:up'), 15_000);
  const sentinel = await startSentinel('gslbd', primary, 1000);
  await underLoad(
    t,
    `sentinels: [{ host: 127.0.0.1, port: ${sentinel.port} }], masterName: gslbd`,
    async (sample) => {
      await sample(1000);
      await primary.kill();
      await sample(5000);
    },
    'the Sentinel primary killed, its replica promoted',
  );
  await waitFor('the replica promoted', () => replica.cli('ROLE').startsWith('master'), 30_000);
  t.is(replica.cli('HGET', '{fault}:map:health.overrides', `web/ap/${ADDRESS.ap}`), '"force-down"', 'the override is on the new primary');
});

test.serial('dnsperf while another node of the deployment is killed (SIGKILL)', async (t) => {
  const redis = await startRedis();
  const store = `url: "${redis.url}"`;
  const c = await startEngine(config('c', store, 'info'));
  await underLoad(
    t,
    store,
    async (sample) => {
      await sample(1500);
      c.signal('SIGKILL');
      await c.stop();
      await sample(4000);
    },
    'node c killed',
  );
});
