import test from 'ava';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { startRedis, stopAllRedis } from '../support/redisServer.js';
import { ecsAnswers as answers, ecsClients, postOverride, SHARED_ADDRESS as ADDRESS, sharedConfig } from '../support/sharedDeployment.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Same client, same answer (src/process/sharedState/README.md): three engine processes sharing one
 * real redis-server give each of 1,000 ECS clients the same data center, before and after an
 * operator override posted to one of them changes the answer of a third of the clients. The policy
 * is deterministic (client-subnet rules, `top-1` of the rule's order); the override is the shared
 * input. Then the state survives restarts: one node is killed (SIGKILL), another clears that
 * override and forces another data center down while it is down, and once restarted it answers every client as the others do; then all
 * three are restarted together and still answer alike, from the state kept in Redis.
 */

test.after.always(async () => {
  await stopAllEngines();
  await stopAllRedis();
});

test('1,000 ECS clients get the same data center from three nodes, before and after an override, after a node is killed and restarted, after all restart', async (t) => {
  const redis = await startRedis();
  const config = (node: string): string => sharedConfig(`{ url: "${redis.url}", node: ${node}, namespace: same, connectTimeoutSeconds: 5 }`, 'info');
  const start = (node: string): Promise<EngineProcess> => startEngine(config(node));
  const began = Date.now();
  const phase = (what: string): void => t.log(`${what}: ${((Date.now() - began) / 1000).toFixed(1)} s`);
  let nodes = await Promise.all(['a', 'b', 'c'].map(start));
  phase('three nodes up');
  const clients = ecsClients(1000);
  /** Every node's answers to every client; asserts they are the same and returns them. */
  const agreed = async (what: string): Promise<string[]> => {
    const [first, ...others] = await Promise.all(nodes.map((n) => answers(n, clients)));
    for (const [i, other] of others.entries()) t.deepEqual(other, first, `${what}: node ${'bc'[i]} answers every client as node a does`);
    return first!;
  };
  const count = (all: string[], dc: keyof typeof ADDRESS): number => all.filter((x) => x === `0:${ADDRESS[dc]}`).length;
  /** Waits until `node` answers the first client (a client of the ap/eu rule) `dc`. */
  const firstClientGets = (node: EngineProcess, dc: keyof typeof ADDRESS): Promise<number> =>
    waitFor(`node ${node.pid} answers the first client ${dc}`, async () => (await answers(node, [clients[0]!]))[0] === `0:${ADDRESS[dc]}`, 15_000);

  const before = await agreed('before any override');
  t.deepEqual([count(before, 'ap'), count(before, 'eu'), count(before, 'us')], [334, 333, 333]);

  t.is(await postOverride(nodes[0]!, 'ap', 'force-down'), 200);
  for (const n of nodes) await firstClientGets(n, 'eu');
  const after = await agreed('after an override posted to node a');
  t.deepEqual([count(after, 'ap'), count(after, 'eu'), count(after, 'us')], [0, 667, 333], 'the clients of ap now get the next in their rule (eu)');

  phase('1,000 clients compared before and after an override');
  // Node c killed; while it is down, b clears ap's override and forces us down; c restarted.
  const c = nodes[2]!;
  c.signal('SIGKILL');
  await c.stop();
  t.is(await postOverride(nodes[1]!, 'ap', 'none'), 200);
  t.is(await postOverride(nodes[1]!, 'us', 'force-down'), 200);
  const restarted = await start('c');
  nodes = [nodes[0]!, nodes[1]!, restarted];
  for (const n of nodes) await waitFor('us forced down on every node', async () => (await answers(n, ['11.0.0.0/24']))[0] === `0:${ADDRESS.ap}`, 15_000);
  const afterKill = await agreed('node c killed and restarted, an override posted meanwhile');
  t.deepEqual([count(afterKill, 'ap'), count(afterKill, 'eu'), count(afterKill, 'us')], [667, 333, 0], 'ap back, us down: the default rule’s clients get ap');

  phase('node c killed, restarted, compared');
  // Every node restarted at once: the overrides are kept in Redis and every node loads them.
  await Promise.all(nodes.map((n) => n.stop()));
  nodes = await Promise.all(['a', 'b', 'c'].map(start));
  for (const n of nodes) await firstClientGets(n, 'ap');
  t.deepEqual(await agreed('every node restarted'), afterKill, 'the same answers as before the restart');
  phase('every node restarted, compared');
});
