import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { udpQuery } from './dnsClient.js';

/**
 * The two-engine deployment of the shared-state "same client, same answer" tests
 * (src/process/sharedState/README.md): three data centers, one endpoint each, and
 * `www.example.test` steered by client-subnet rules with `top-1`, so the answer is deterministic
 * and an override is the only shared input that changes it.
 */

/** The endpoint address of each data center. */
export const SHARED_ADDRESS = { ap: '203.0.113.10', eu: '198.51.100.10', us: '192.0.2.10' } as const;
/** The admin token of every engine of the deployment. */
export const SHARED_TOKEN = 'shared-deployment-token-0123456789';

/** The configuration text of one node; `redis` is the YAML flow mapping of `store.redis` (node, namespace, url or cluster). */
export function sharedConfig(redis: string): string {
  return `
logging: { level: silent }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${SHARED_TOKEN} }
store:
  redis: ${redis}
geo: { sources: [] }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters: [{ name: ap }, { name: eu }, { name: us }]
services:
  - name: web
    endpoints:
      - { dc: ap, address: ${SHARED_ADDRESS.ap} }
      - { dc: eu, address: ${SHARED_ADDRESS.eu} }
      - { dc: us, address: ${SHARED_ADDRESS.us} }
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

/** Starts an engine in this process on `text` (written to a temporary directory), stopped and removed at the test's teardown. */
export async function startSharedEngine(t: { teardown(f: () => Promise<void>): void }, text: string): Promise<RunningGslbd> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-shared-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, text);
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return running;
}

/** `rcode:addresses` of the A answer each ECS client (`a.b.c.d/len`) gets from `node`, in order (50 queries in flight at most). */
export async function ecsAnswers(node: RunningGslbd, clients: readonly string[]): Promise<string[]> {
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

/** Posts a health override of data center `dc`'s endpoint to `node`'s admin API; resolves with the HTTP status. */
export async function postOverride(node: RunningGslbd, dc: keyof typeof SHARED_ADDRESS, value: 'force-down' | 'none'): Promise<number> {
  const posted = await fetch(`http://127.0.0.1:${node.admin!.port}/health/override`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SHARED_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: `web/${dc}/${SHARED_ADDRESS[dc]}`, override: value }),
  });
  return posted.status;
}
