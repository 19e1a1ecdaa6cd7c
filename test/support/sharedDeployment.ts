import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { buildQuery, decodeReply } from './dnsClient.js';
import type { EngineProcess } from './engineProcess.js';
import { seededRandom } from './seededRandom.js';
import { exchangeAll } from './udpExchangeAll.js';

/**
 * The deployment of the shared-state "same client, same answer" tests
 * (src/process/sharedState/README.md), run by engines in the test's process ({@link startSharedEngine})
 * or as separate processes (`engineProcess.ts`): three data centers, one endpoint each, and
 * `www.example.test` steered by client-subnet rules with `top-1`, so the answer is deterministic
 * and an override is the only shared input that changes it.
 */

/** The endpoint address of each data center. */
export const SHARED_ADDRESS = { ap: '203.0.113.10', eu: '198.51.100.10', us: '192.0.2.10' } as const;
/** The admin token of every engine of the deployment. */
export const SHARED_TOKEN = 'shared-deployment-token-0123456789';

/**
 * The configuration text of one node; `redis` is the YAML flow mapping of `store.redis` (node,
 * namespace, url or cluster); `logLevel` `info` for an engine process (`engineProcess.ts` waits for
 * its `gslbd up` line).
 */
export function sharedConfig(redis: string, logLevel: 'silent' | 'info' = 'silent'): string {
  return `
logging: { level: ${logLevel} }
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

/** A node of the deployment: an engine in the test's process, or an engine process. */
export type SharedNode = RunningGslbd | EngineProcess;

/** The first DNS listener of `node`. */
function dnsOf(node: SharedNode): { address: string; port: number } {
  return 'server' in node ? node.server : node.dns.bound[0]!;
}

/** The admin base URL of `node` (`http://127.0.0.1:PORT`). */
function adminOf(node: SharedNode): string {
  return 'server' in node ? node.adminUrl! : `http://127.0.0.1:${node.admin!.port}`;
}

/**
 * `count` ECS clients (`a.b.c.d/24`) drawn with seed 21, a third in each rule of the deployment:
 * 10.0/10 (ap, eu), 10.64/10 (eu, us), and the rest of 10/8 or other /8s (the default rule: us, ap).
 * With 1,000: 334 get ap, 333 eu, 333 us.
 */
export function ecsClients(count: number): string[] {
  const random = seededRandom(21);
  return Array.from({ length: count }, (_, i) => {
    const first = i % 3 === 2 ? 11 + Math.floor(random() * 100) : 10;
    const second = i % 3 === 0 ? Math.floor(random() * 64) : i % 3 === 1 ? 64 + Math.floor(random() * 64) : Math.floor(random() * 256);
    return `${first}.${second}.${Math.floor(random() * 256)}.0/24`;
  });
}

/**
 * `rcode:addresses` of the A answer each ECS client (`a.b.c.d/len`) gets from `node`, in order:
 * one socket, a window of queries in flight, a query unanswered after 1 s asked again
 * (`udpExchangeAll.ts`), so a loaded machine slows the comparison without failing it.
 */
export async function ecsAnswers(node: SharedNode, clients: readonly string[]): Promise<string[]> {
  const { address, port } = dnsOf(node);
  const replies = await exchangeAll(
    address,
    port,
    clients.map((ecs, i) => buildQuery({ name: 'www.example.test', type: 'A', id: i & 0xffff, edns: { ecs } })),
  );
  return replies.map((raw) => {
    const r = decodeReply(raw);
    const a = (r.packet.answers ?? []).filter((x) => x.type === 'A').map((x) => String((x as { data: unknown }).data));
    return `${r.rcode}:${a.join(',')}`;
  });
}

/** Posts a health override of data center `dc`'s endpoint to `node`'s admin API; resolves with the HTTP status. */
export async function postOverride(node: SharedNode, dc: keyof typeof SHARED_ADDRESS, value: 'force-down' | 'none'): Promise<number> {
  const posted = await fetch(`${adminOf(node)}/health/override`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SHARED_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ endpoint: `web/${dc}/${SHARED_ADDRESS[dc]}`, override: value }),
  });
  return posted.status;
}
