import test from 'ava';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDigOutput, type DigResult } from '../support/dig.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { waitFor } from '../support/waitFor.js';

/**
 * A network partition between engines and Redis (src/process/sharedState/README.md "Failure
 * semantics"), with real network namespaces: Redis in namespace R, engine A in namespace A, engine
 * B in namespace B, each engine joined to R by its own veth pair (10.211.1.0/30 and 10.211.2.0/30,
 * addresses that exist only inside these namespaces). The endpoint in `ap` is checked by TCP on
 * 127.0.0.1:7000, which is each node's own loopback: B runs a TCP service there, A does not, so A's
 * path is bad and B's good (the same check id on both). Before the cut the quorum (2 observers)
 * keeps `ap` up on both nodes. A's link is then cut (`ip link set down` on R's end); while cut:
 * `/status` says A's store is disconnected; within the grace period A answers from its last view
 * (`ap`); after it A's own monitor decides alone (`ap` down on A); an override posted to B changes
 * B's answer and not A's, one posted to A changes A's and not B's; A answers NOERROR throughout.
 * Once the link is up again both overrides are on both nodes, which answer alike. Needs root
 * (`ip netns`): without it the test fails, never skips.
 */

test.after.always(stopAllEngines);

const TOKEN = 'shared-partition-token-0123456789';
/** How long a node cut from Redis keeps deciding health from the last votes before its own monitors decide alone. */
const GRACE_SECONDS = 6;
const ADDRESS = { ap: '203.0.113.10', eu: '198.51.100.10', us: '192.0.2.10' } as const;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

/** Runs `command` inside namespace `ns`; resolves with stdout. */
function inNs(ns: string, command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, command, ...args], { timeout: 15_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} in ${ns}: ${err.message} ${stderr}`));
      else resolve(stdout);
    });
  });
}

function config(node: string, redisAddress: string): string {
  return `
logging: { level: info }
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} }
store:
  redis: { url: "redis://${redisAddress}:6379", node: ${node}, namespace: part, connectTimeoutSeconds: 10 }
geo: { sources: [] }
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters: [{ name: ap }, { name: eu }, { name: us }]
services:
  - name: web
    endpoints:
      - { dc: ap, address: ${ADDRESS.ap}, monitors: [tcp], check: { address: 127.0.0.1, port: 7000 } }
      - { dc: eu, address: ${ADDRESS.eu} }
      - { dc: us, address: ${ADDRESS.us} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static, pickDcCount: 1, balanceAlgorithm: top-1, rules: [{ dcs: [ap, eu, us] }] }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: 200, timeoutMs: 200, rise: 1, fall: 1 }]
  quorum: { observers: 2, voteTtlSeconds: 3, graceSeconds: ${GRACE_SECONDS} }
`;
}

test('a node cut from Redis serves its last view, its own writes wait, and both converge on heal', async (t) => {
  if (process.getuid?.() !== 0) throw new Error('this test needs root (ip netns, veth): run it as root; it never skips');
  const tag = `gp${process.pid % 100_000}`;
  const [nsR, nsA, nsB] = [`${tag}r`, `${tag}a`, `${tag}b`];
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-partition-'));
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    await stopAllEngines();
    for (const c of children)
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await once(c, 'exit');
      }
    for (const ns of [nsR, nsA, nsB])
      try {
        ip('netns', 'del', ns);
      } catch {
        // never made
      }
    rmSync(dir, { recursive: true, force: true });
  });
  for (const ns of [nsR, nsA, nsB]) {
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  for (const [i, ns] of [
    [1, nsA],
    [2, nsB],
  ] as const) {
    ip('-n', nsR, 'link', 'add', `r${i}`, 'type', 'veth', 'peer', 'name', `e${i}`, 'netns', ns);
    ip('-n', nsR, 'addr', 'add', `10.211.${i}.1/30`, 'dev', `r${i}`);
    ip('-n', ns, 'addr', 'add', `10.211.${i}.2/30`, 'dev', `e${i}`);
    ip('-n', nsR, 'link', 'set', `r${i}`, 'up');
    ip('-n', ns, 'link', 'set', `e${i}`, 'up');
  }
  writeFileSync(
    join(dir, 'redis.conf'),
    ['port 6379', 'bind 10.211.1.1 10.211.2.1 127.0.0.1', 'protected-mode no', `dir ${dir}`, 'save ""', 'appendonly no', 'logfile ""'].join('\n') + '\n',
  );
  children.push(spawn('ip', ['netns', 'exec', nsR, 'redis-server', join(dir, 'redis.conf')], { stdio: 'ignore' }));
  // B's good path to the endpoint: a TCP service on B's own 127.0.0.1:7000 (A has none).
  children.push(
    spawn('ip', ['netns', 'exec', nsB, 'redis-server', '--port', '7000', '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: 'ignore',
    }),
  );
  await waitFor('redis-server in its namespace', async () => (await inNs(nsR, 'redis-cli', ['PING']).catch(() => '')).trim() === 'PONG', 15_000);
  await waitFor('B’s TCP service', async () => (await inNs(nsB, 'redis-cli', ['-p', '7000', 'PING']).catch(() => '')).trim() === 'PONG', 15_000);

  const a = await startEngine(config('a', '10.211.1.1'), { netns: nsA });
  const b = await startEngine(config('b', '10.211.2.1'), { netns: nsB });
  const query = async (ns: string, e: EngineProcess): Promise<DigResult> =>
    parseDigOutput(await inNs(ns, 'dig', ['@127.0.0.1', '-p', String(e.server.port), '+norec', '+time=2', '+tries=1', 'www.example.test', 'A']));
  const answer = async (ns: string, e: EngineProcess): Promise<string> => {
    const r = await query(ns, e);
    return `${r.status}:${r.answer.map((x) => x.data).join(',')}`;
  };
  const admin = async (ns: string, e: EngineProcess, method: string, path: string, body?: unknown): Promise<string> =>
    inNs(ns, 'curl', [
      '-s',
      '-S',
      '--max-time',
      '10',
      '-X',
      method,
      '-H',
      `authorization: Bearer ${TOKEN}`,
      ...(body ? ['-H', 'content-type: application/json', '-d', JSON.stringify(body)] : []),
      `${e.adminUrl!}${path}`,
    ]);
  const storeState = async (ns: string, e: EngineProcess): Promise<string> =>
    (JSON.parse(await admin(ns, e, 'GET', '/status')) as { store: { state: string } }).store.state;
  const override = (ns: string, e: EngineProcess, dc: keyof typeof ADDRESS) =>
    admin(ns, e, 'POST', '/health/override', { endpoint: `web/${dc}/${ADDRESS[dc]}`, override: 'force-down' });

  await waitFor(
    'both engines connected to Redis',
    async () => (await storeState(nsA, a)) === 'connected' && (await storeState(nsB, b)) === 'connected',
    15_000,
  );
  // Both nodes have voted (A down, B up): one node's bad path does not take ap down.
  await waitFor('A has checked ap (down from A)', async () => (await admin(nsA, a, 'GET', '/health')).includes('"down"'), 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  t.is(await answer(nsA, a), `NOERROR:${ADDRESS.ap}`, 'quorum 2: A alone seeing ap down does not take it down');
  t.is(await answer(nsB, b), `NOERROR:${ADDRESS.ap}`);

  // The partition: A's link to Redis goes down (A and B keep running; B still reaches Redis).
  ip('-n', nsR, 'link', 'set', 'r1', 'down');
  const cut = Date.now();
  await waitFor('A notices it is cut from Redis', async () => (await storeState(nsA, a)) === 'disconnected', 15_000);
  t.log(`link down → A's store disconnected after ${Date.now() - cut} ms`);
  t.is(await storeState(nsB, b), 'connected');

  t.is(await answer(nsA, a), `NOERROR:${ADDRESS.ap}`, 'within the grace period A answers from the last votes');
  await override(nsB, b, 'ap');
  await waitFor('B answers its override', async () => (await answer(nsB, b)) === `NOERROR:${ADDRESS.eu}`, 5000);
  await override(nsA, a, 'eu');
  const during: string[] = [];
  // The grace period counts from when A noticed (~2.5 s after the cut); then answers change within a monitor interval.
  const until = cut + GRACE_SECONDS * 1000 + 6000;
  while (Date.now() < until) during.push(await answer(nsA, a));
  t.true(
    during.every((x) => x.startsWith('NOERROR:')),
    'A answers every query with NOERROR during the partition',
  );
  t.false(during.includes(`NOERROR:${ADDRESS.eu}`), 'B’s override never reached A (and A’s own forces eu down)');
  t.is(during.at(-1), `NOERROR:${ADDRESS.us}`, 'after the grace period A’s own monitor decides alone: ap down on A, eu down by A’s override');
  t.log(`A's answers during the partition: ${JSON.stringify(Object.fromEntries([...new Set(during)].map((x) => [x, during.filter((y) => y === x).length])))}`);
  t.is(await answer(nsB, b), `NOERROR:${ADDRESS.eu}`, 'A’s write made during the partition has not reached B');
  const metricsOfA = await admin(nsA, a, 'GET', '/metrics');
  t.regex(metricsOfA, /^gslbd_health_quorum_deciding_alone 1$/m, 'A’s /metrics: deciding alone');
  t.regex(metricsOfA, /^gslbd_health_quorum_decisions_total\{status="down",basis="alone"\} [1-9]/m, 'A’s /metrics counts its decision alone (ap down)');
  t.regex(metricsOfA, /^gslbd_health_quorum_decisions_total\{status="up",basis="quorum"\} [1-9]/m, 'and the quorum’s up decision before the cut');

  // Heal: A reconnects, writes what it changed meanwhile, reloads every map.
  ip('-n', nsR, 'link', 'set', 'r1', 'up');
  const healed = Date.now();
  await waitFor('A reconnected', async () => (await storeState(nsA, a)) === 'connected', 20_000);
  await waitFor(
    'both overrides on both nodes',
    async () => (await answer(nsA, a)) === `NOERROR:${ADDRESS.us}` && (await answer(nsB, b)) === `NOERROR:${ADDRESS.us}`,
    10_000,
  );
  t.log(`link up → both nodes answer both overrides after ${Date.now() - healed} ms`);
});
