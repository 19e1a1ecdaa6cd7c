import test from 'ava';
import { dig, type DigResult } from '../support/dig.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { DC_ADDRESS, LEAF_ZONES, proximityConfig, ZONE_TOKENS } from '../support/proximityFixture.js';
import { startRedis, stopAllRedis, type RedisPeer } from '../support/redisServer.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Two engine processes sharing one real redis-server (src/process/sharedState/README.md): the
 * agents' probe-request queue and the proximity database are shared, so an agent may long-poll
 * any node for the probe requests of every node, each request is given once per group, and a
 * measurement reported to one node orders the zones on the other. Clients are resolver addresses
 * of their own /24 inside 127.0.0.0/8 (`dig -b`), as in networkProximity.test.ts.
 */

test.after.always(async () => {
  await stopAllEngines();
  await stopAllRedis();
});

function config(node: string, redis: RedisPeer): string {
  return proximityConfig({
    sections: `logging: { level: info }
store:
  redis: { url: "${redis.url}", node: ${node}, namespace: proximity, connectTimeoutSeconds: 5 }`,
  });
}

async function call(e: EngineProcess, token: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(`${e.adminUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, json: await r.json() };
}

const ask = (e: EngineProcess, from: string): Promise<DigResult> => dig(e.server, ['-b', from, 'www.work.test', 'A']);
const addresses = (r: DigResult): string[] => r.answer.filter((a) => a.type === 'A').map((a) => a.data);
const networks = (r: { json: { requests: { network: string }[] } }): string[] => r.json.requests.map((q) => q.network);

let nodes: Promise<[EngineProcess, EngineProcess]> | undefined;
/** Both nodes, started once for the tests of this file (each test uses client networks of its own). */
function twoNodes(): Promise<[EngineProcess, EngineProcess]> {
  nodes ??= (async () => {
    const redis = await startRedis();
    return Promise.all([startEngine(config('a', redis)), startEngine(config('b', redis))]);
  })();
  return nodes;
}

test.serial('a probe request queued by a query on node a is given to an agent long-polling node b, once per group', async (t) => {
  const [a, b] = await twoNodes();
  // The long poll on b starts before the query on a: b's poll must wake on a's append.
  const started = performance.now();
  const polled = call(b, ZONE_TOKENS['0.1'], '/agent/v1/probes?max=10&wait=20');
  await new Promise((r) => setTimeout(r, 300));
  t.is((await ask(a, '127.0.11.1')).status, 'NOERROR');
  const fromB = await polled;
  t.is(fromB.status, 200);
  t.deepEqual(networks(fromB), ['127.0.11.0/24'], 'the request of a query on a, given by b');
  t.true(performance.now() - started < 15_000, 'the long poll woke on the other node’s append, not at its end');
  t.deepEqual(networks(await call(a, ZONE_TOKENS['0.1'], '/agent/v1/probes?max=10&wait=0')), [], 'not given again to the group on node a');
  t.deepEqual(networks(await call(b, ZONE_TOKENS['0.1'], '/agent/v1/probes?max=10&wait=0')), [], 'nor on node b');
  t.deepEqual(
    networks(await call(a, ZONE_TOKENS['1'], '/agent/v1/probes?max=10&wait=0')),
    ['127.0.11.0/24'],
    'another group (zone 1) gets it too, from node a',
  );
  t.deepEqual(networks(await call(b, ZONE_TOKENS['1'], '/agent/v1/probes?max=10&wait=0')), []);
});

test.serial('a measurement reported to node a orders the zones on node b (the PDB is shared)', async (t) => {
  const [a, b] = await twoNodes();
  const from = '127.0.12.1';
  t.deepEqual(addresses(await ask(b, from)), [DC_ADDRESS.eu], 'unmeasured: the fallback order (Europe first) on b');
  for (const z of LEAF_ZONES) {
    const rtt = { '0.1': 150, '0.2': 10, '1': 200 }[z];
    const r = await call(a, ZONE_TOKENS[z], '/agent/v1/report', {
      zone: z,
      probes: [{ target: from, method: 'dns', sent: 3, received: 3, rttMinMs: rtt, rttMedianMs: rtt }],
    });
    t.is(r.status, 200);
  }
  const ms = await waitFor('node b answers the West Coast (measured on a)', async () => addresses(await ask(b, from))[0] === DC_ADDRESS.west, 10_000, {
    everyMs: 200,
  });
  t.log(`a measurement reported to node a ordered node b's answer within ${Math.round(ms)} ms (index TTL 1 s)`);
  t.deepEqual(addresses(await ask(a, from)), [DC_ADDRESS.west], 'and node a’s');
  const explained = await (await fetch(`${b.adminUrl}/explain?name=www.work.test&type=A&client=${from}`)).json();
  const step = explained.selections[0].steps.find((s: { stage: string }) => s.stage === 'network-proximity');
  t.like(step, { measured: true, network: '127.0.12.0/24' });
});
