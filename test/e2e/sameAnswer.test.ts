import test from 'ava';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { udpQuery } from '../support/dnsClient.js';
import { startRedis, stopAllRedis, type RedisPeer } from '../support/redisServer.js';
import { seededRandom } from '../support/seededRandom.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Same client, same answer (src/process/sharedState/README.md): two engines sharing one real
 * redis-server give each of 1,000 ECS clients the same data center, before and after an operator
 * override posted to one of them changes the answer of a third of the clients. The policy is
 * deterministic (client-subnet rules, `top-1` of the rule's order); the override is the shared input.
 */

test.after.always(stopAllRedis);

const ADDRESS = { ap: '203.0.113.10', eu: '198.51.100.10', us: '192.0.2.10' } as const;
const TOKEN = 'same-answer-token-0123456789';

function config(node: string, redis: RedisPeer): string {
  return `
logging: { level: silent }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} }
store:
  redis: { url: "${redis.url}", node: ${node}, namespace: same, connectTimeoutSeconds: 5 }
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
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-same-answer-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, text);
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return running;
}

/** The A record each ECS client gets from `node` (50 queries in flight at most). */
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

test('1,000 ECS clients get the same data center from both nodes, before and after an override posted to one node', async (t) => {
  const redis = await startRedis();
  const [a, b] = [await engine(t, config('a', redis)), await engine(t, config('b', redis))];
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

  const posted = await fetch(`http://127.0.0.1:${a.admin!.port}/health/override`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: `web/ap/${ADDRESS.ap}`, override: 'force-down' }),
  });
  t.is(posted.status, 200);
  const bound = async (n: RunningGslbd): Promise<boolean> => (await answers(n, [clients[0]!]))[0] === `0:${ADDRESS.eu}`;
  await waitFor('the override on node b', () => bound(b), 10_000);
  const after = await answers(a, clients);
  t.deepEqual(await answers(b, clients), after, 'after the override, too');
  t.is(after.filter((x) => x === `0:${ADDRESS.ap}`).length, 0);
  t.is(after.filter((x) => x === `0:${ADDRESS.eu}`).length, 667, 'the clients of ap now get the next in their rule (eu)');
});
