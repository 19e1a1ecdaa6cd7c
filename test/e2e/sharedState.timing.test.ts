import test from 'ava';
import { createServer, type Server } from 'node:http';
import { aRecords, queryUdp } from '../health/dnsClient.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { startRedis, stopAllRedis, type RedisPeer } from '../support/redisServer.js';
import { sleep, waitFor } from '../support/waitFor.js';

/**
 * Three engine processes sharing one real redis-server (src/process/sharedState/README.md):
 * quorum health, operator actions reaching every node, and the failure semantics (Redis killed,
 * stopped, restarted empty; a node lost). Each node's monitor of `e1` uses its own path, so one
 * node can "not reach" the endpoint while the others can; the check id is the same on every node.
 */

const TOKEN = 'shared-state-e2e-token-0123456789';
const INTERVAL = 200;
/** Slack on top of the expected time: the machine is shared and often loaded. */
const BOUND = 15_000;
const E1 = '192.0.2.11';
const E2 = '192.0.2.12';

test.after.always(async () => {
  await stopAllEngines();
  await stopAllRedis();
});

/** An HTTP endpoint: `/ok` answers 200, `/blocked` 503; `down` makes every path 503. */
function startEndpoint(): Promise<{ port: number; state: { down: boolean }; server: Server }> {
  const state = { down: false };
  const server = createServer((req, res) => {
    res.statusCode = state.down || req.url === '/blocked' ? 503 : 200;
    res.end('x');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, state, server })));
}

function config(node: string, redis: RedisPeer, endpointPort: number, path: string): string {
  return `
logging: { level: info }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} }
store:
  redis: { url: "${redis.url}", node: ${node}, namespace: e2e, connectTimeoutSeconds: 5 }
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
datacenters: [{ name: dc-a }]
services:
  - name: web
    endpoints:
      - { dc: dc-a, address: ${E1}, monitors: [web], check: { address: 127.0.0.1, port: ${endpointPort} } }
      - { dc: dc-a, address: ${E2} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 1, balanceAlgorithm: all }
    health: { allDown: fail-open }
health:
  quorum: { observers: 2, voteTtlSeconds: 2, graceSeconds: 4 }
  monitors: [{ name: web, type: http, path: ${path}, intervalMs: ${INTERVAL}, timeoutMs: 180, rise: 1, fall: 1 }]
`;
}

/** The value of the sample `name` (with its labels, as exposed) in a /metrics text; NaN when absent. */
function sample(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}

const answer = async (e: EngineProcess): Promise<string[]> => aRecords(await queryUdp(e.server.port, 'www.example.test'));

/** Waits until every node answers `want`; returns the time it took (ms). */
function everyNodeAnswers(nodes: readonly EngineProcess[], want: string[], what: string): Promise<number> {
  let last: string[][] = [];
  return waitFor(
    what,
    async () => {
      last = await Promise.all(nodes.map(answer));
      return last.every((a) => JSON.stringify(a) === JSON.stringify(want));
    },
    BOUND,
    { detail: () => `answers: ${JSON.stringify(last)}` },
  );
}

function override(e: EngineProcess, endpoint: string, value: string): Promise<Response> {
  return fetch(`${e.adminUrl}/health/override`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint, override: value }),
  });
}

/**
 * Queries every node without pause while `during` runs; every answer must be NOERROR with at
 * least one address (never NXDOMAIN, SERVFAIL or a timeout). Returns how many answers came.
 */
async function answersThroughout(nodes: readonly EngineProcess[], during: () => Promise<void>): Promise<{ answered: number; failures: string[] }> {
  let stop = false;
  let answered = 0;
  const failures: string[] = [];
  const loops = nodes.map(async (n, i) => {
    while (!stop) {
      try {
        const r = await queryUdp(n.server.port, 'www.example.test', 'A', 2000);
        if (r.rcode !== 'NOERROR' || aRecords(r).length === 0) failures.push(`node ${i}: ${r.rcode} ${JSON.stringify(aRecords(r))}`);
        else answered++;
      } catch (e) {
        failures.push(`node ${i}: ${(e as Error).message}`);
      }
      await sleep(5);
    }
  });
  try {
    await during();
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  return { answered, failures };
}

test('three nodes, one Redis: quorum health, an override from one node reaches all, the query path outlives Redis', async (t) => {
  const redis = await startRedis();
  const ep = await startEndpoint();
  try {
    // Node a cannot "reach" e1 (its monitor's path answers 503); b and c can.
    const nodes = await Promise.all([
      startEngine(config('a', redis, ep.port, '/blocked')),
      startEngine(config('b', redis, ep.port, '/ok')),
      startEngine(config('c', redis, ep.port, '/ok')),
    ]);
    const [a, b] = nodes as [EngineProcess, EngineProcess, EngineProcess];
    await everyNodeAnswers(nodes, [E1, E2], 'all nodes answer both endpoints');
    // Long enough for node a's own check to have failed many times (fall 1, 200 ms interval).
    await sleep(10 * INTERVAL);
    t.deepEqual(await answer(a), [E1, E2], 'one observer seeing e1 down does not take it down (2 of 3)');
    const metricsOfA = await (await fetch(`${a.adminUrl}/metrics`)).text();
    t.true(sample(metricsOfA, 'gslbd_health_quorum_decisions_total{status="up",basis="quorum"}') >= 1, 'a’s /metrics counts the quorum’s up decision');
    t.is(sample(metricsOfA, 'gslbd_health_quorum_deciding_alone'), 0);

    // Reachable by none: down everywhere.
    ep.state.down = true;
    const downMs = await everyNodeAnswers(nodes, [E2], 'e1 down on every node');
    const downMetrics = await (await fetch(`${b.adminUrl}/metrics`)).text();
    t.true(sample(downMetrics, 'gslbd_health_quorum_decisions_total{status="down",basis="quorum"}') >= 1, 'b’s /metrics counts the quorum’s down decision');
    ep.state.down = false;
    await everyNodeAnswers(nodes, [E1, E2], 'e1 back on every node');
    t.log(`e1 unreachable by all → every node's answer changed within ${downMs} ms`);

    // An override posted to one node reaches every node.
    t.is((await override(b, 'web/dc-a/192.0.2.12', 'force-down')).status, 200);
    const overrideMs = await everyNodeAnswers(nodes, [E1], 'the override on every node');
    t.log(`override posted to node b → every node answers it within ${overrideMs} ms`);

    // Redis killed: every node keeps answering from its last view (the override still applies).
    const killed = await answersThroughout(nodes, async () => {
      await redis.kill();
      await sleep(3000);
      for (const n of nodes) t.deepEqual(await answer(n), [E1], 'the last view is served while Redis is gone');
      // Restarted without its data: the nodes write their state back.
      await redis.restart();
      await waitFor(
        'the override is written back to the emptied Redis',
        () => redis.cli('HGET', '{e2e}:map:health.overrides', 'web/dc-a/192.0.2.12') !== '',
        BOUND,
      );
    });
    t.deepEqual(killed.failures, [], 'no failed answer while Redis was killed and restarted empty');
    t.log(`Redis killed and restarted empty: ${killed.answered} answers, 0 failures`);

    // Redis stopped (a partition as the nodes see it): answers continue.
    const paused = await answersThroughout(nodes, async () => {
      redis.pause();
      await sleep(4000);
      redis.resume();
    });
    t.deepEqual(paused.failures, []);
    t.log(`Redis stopped 4 s: ${paused.answered} answers, 0 failures`);

    // The override is cleared from another node after all this: it reaches every node again.
    t.is((await override(a, 'web/dc-a/192.0.2.12', 'none')).status, 200);
    await everyNodeAnswers(nodes, [E1, E2], 'the cleared override on every node');

    // Nodes lost: their votes expire and the quorum is recomputed over the live node, whose own
    // verdict (e1 down) now decides.
    await Promise.all([nodes[1]!.stop(), nodes[2]!.stop()]);
    const lostMs = await everyNodeAnswers([a], [E2], 'node a alone decides e1 down once the others’ votes expire');
    t.log(`two of three nodes stopped → node a's answer follows its own check within ${lostMs} ms (vote TTL 2 s)`);
    // A node comes back: its vote counts again (1 down of 2 live voters < 2 observers: up).
    const b2 = await startEngine(config('b', redis, ep.port, '/ok'));
    await everyNodeAnswers([a, b2], [E1, E2], 'a restarted node’s vote counts again');
  } finally {
    await new Promise((r) => ep.server.close(r));
  }
});
