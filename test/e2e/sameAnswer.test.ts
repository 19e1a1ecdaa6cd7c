import test from 'ava';
import type { RunningGslbd } from '../../src/process/gslbdProcess.js';
import { startRedis, stopAllRedis } from '../support/redisServer.js';
import { seededRandom } from '../support/seededRandom.js';
import { ecsAnswers as answers, postOverride, SHARED_ADDRESS as ADDRESS, sharedConfig, startSharedEngine as engine } from '../support/sharedDeployment.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Same client, same answer (src/process/sharedState/README.md): two engines sharing one real
 * redis-server give each of 1,000 ECS clients the same data center, before and after an operator
 * override posted to one of them changes the answer of a third of the clients. The policy is
 * deterministic (client-subnet rules, `top-1` of the rule's order); the override is the shared input.
 */

test.after.always(stopAllRedis);

test('1,000 ECS clients get the same data center from both nodes, before and after an override posted to one node', async (t) => {
  const redis = await startRedis();
  const config = (node: string): string => sharedConfig(`{ url: "${redis.url}", node: ${node}, namespace: same, connectTimeoutSeconds: 5 }`);
  const [a, b] = [await engine(t, config('a')), await engine(t, config('b'))];
  const random = seededRandom(21);
  // A third in each rule: 10.0/10, 10.64/10, and the rest of 10/8 (plus other /8s for the default rule).
  const clients = Array.from({ length: 1000 }, (_, i) => {
    const first = i % 3 === 2 ? 11 + Math.floor(random() * 100) : 10;
    const second = i % 3 === 0 ? Math.floor(random() * 64) : i % 3 === 1 ? 64 + Math.floor(random() * 64) : Math.floor(random() * 256);
    return `${first}.${second}.${Math.floor(random() * 256)}.0/24`;
  });
  const before = await answers(a, clients);
  t.deepEqual(await answers(b, clients), before, 'node b answers every client as node a does');
  t.is(before.filter((x) => x === `0:${ADDRESS.ap}`).length, 334);
  t.is(before.filter((x) => x === `0:${ADDRESS.eu}`).length, 333);
  t.is(before.filter((x) => x === `0:${ADDRESS.us}`).length, 333);

  t.is(await postOverride(a, 'ap', 'force-down'), 200);
  const bound = async (n: RunningGslbd): Promise<boolean> => (await answers(n, [clients[0]!]))[0] === `0:${ADDRESS.eu}`;
  await waitFor('the override on node b', () => bound(b), 10_000);
  const after = await answers(a, clients);
  t.deepEqual(await answers(b, clients), after, 'after the override, too');
  t.is(after.filter((x) => x === `0:${ADDRESS.ap}`).length, 0);
  t.is(after.filter((x) => x === `0:${ADDRESS.eu}`).length, 667, 'the clients of ap now get the next in their rule (eu)');
});
