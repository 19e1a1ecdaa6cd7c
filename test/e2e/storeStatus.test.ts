import test from 'ava';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { startRedis, stopAllRedis, type RedisPeer } from '../support/redisServer.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The shared store as an operator sees it (src/process/sharedState/README.md, "Observing the
 * store"): `/status` lists the nodes sharing the store with their configuration hash, and
 * `/metrics` has the store's connection, errors, reconnections, operation times and replica keys.
 * Three engines in this worker share one real redis-server; node c runs another configuration.
 */

test.after.always(stopAllRedis);

function config(node: string, redis: RedisPeer, ttl: number): string {
  return `
logging: { level: silent }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: status-token-0123456789 }
store:
  redis: { url: "${redis.url}", node: ${node}, namespace: status, connectTimeoutSeconds: 5 }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters: [{ name: dc-a }]
services:
  - name: web
    endpoints: [{ dc: dc-a, address: 192.0.2.11 }]
records:
  - { name: www.example.test, type: A, ttl: ${ttl}, service: web, policy: { type: static-proximity } }
`;
}

async function engine(t: { teardown(f: () => Promise<void>): void }, text: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-store-status-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, text);
  const running: RunningGslbd = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return `http://127.0.0.1:${running.admin!.port}`;
}

interface Status {
  store: {
    kind: string;
    state: string;
    lastError: { message: string } | null;
    nodes: { node: string; configHash: string; sameConfig: boolean; lastSeenSecondsAgo: number }[];
  };
}
const status = async (url: string): Promise<Status> => (await (await fetch(`${url}/status`)).json()) as Status;
const metrics = async (url: string): Promise<string> => (await fetch(`${url}/metrics`)).text();
/** The value of the sample `name` (with its labels, as exposed), or undefined. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

test('/status shows the nodes sharing the store and which run another configuration; /metrics the store’s connection, errors, reconnections and replica', async (t) => {
  const redis = await startRedis();
  const a = await engine(t, config('a', redis, 30));
  await engine(t, config('b', redis, 30));
  await engine(t, config('c', redis, 60));

  let s = await status(a);
  await waitFor('node a sees three nodes', async () => (s = await status(a)).store.nodes.length === 3, 10_000);
  t.like(s.store, { kind: 'redis', state: 'connected', lastError: null });
  t.deepEqual(
    s.store.nodes.map((n) => [n.node, n.sameConfig]),
    [
      ['a', true],
      ['b', true],
      ['c', false],
    ],
    'nodes a and b differ only in per-node sections (same hash); c has another record TTL',
  );
  t.is(s.store.nodes[0]!.configHash, s.store.nodes[1]!.configHash);
  t.true(s.store.nodes.every((n) => n.lastSeenSecondsAgo >= 0 && n.lastSeenSecondsAgo < 10));

  const m = await metrics(a);
  t.is(sample(m, 'gslbd_store_connected'), 1);
  t.is(sample(m, 'gslbd_store_nodes{config="same"}'), 2);
  t.is(sample(m, 'gslbd_store_nodes{config="different"}'), 1);
  t.is(sample(m, 'gslbd_store_replica_keys{map="store.nodes"}'), 3);
  t.is(sample(m, 'gslbd_store_stale_seconds'), 0);
  t.true((sample(m, 'gslbd_store_operation_seconds_count{operation="write"}') ?? 0) > 0);
  t.is(sample(m, 'gslbd_store_reconnects_total'), 0);

  await redis.kill();
  await waitFor('node a sees Redis gone', async () => (s = await status(a)).store.state === 'disconnected', 10_000);
  // The closed socket tells first; the failed writes and refused reconnections are the errors.
  await waitFor('the client’s last error is shown', async () => (s = await status(a)).store.lastError !== null, 10_000);
  t.regex(s.store.lastError!.message, /E[A-Z]+|closed/, 'the client’s own words (a refused connection or a broken pipe)');
  await waitFor('stale seconds grow', async () => (sample(await metrics(a), 'gslbd_store_stale_seconds') ?? 0) > 0.5, 5000);
  const down = await metrics(a);
  t.is(sample(down, 'gslbd_store_connected'), 0);
  t.true((sample(down, 'gslbd_store_errors_total') ?? 0) > 0);

  await redis.restart();
  await waitFor('node a reconnects', async () => (await status(a)).store.state === 'connected', 15_000);
  const up = await metrics(a);
  t.is(sample(up, 'gslbd_store_connected'), 1);
  t.is(sample(up, 'gslbd_store_reconnects_total'), 1);
  await waitFor('every node’s beat is back in the emptied Redis', async () => redis.cli('HLEN', '{status}:map:store.nodes') === '3', 10_000);
});
