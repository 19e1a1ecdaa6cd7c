import test from 'ava';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDnsperfOutput, type DnsperfResult } from '../bench/harness/dnsperf.js';
import { parseDigOutput, type DigResult } from '../support/dig.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { waitFor } from '../support/waitFor.js';

/**
 * A network partition between engines and Redis (src/process/sharedState/README.md "Failure
 * semantics"), with real network namespaces: Redis in namespace R, engines A, B and C each in a
 * namespace of its own, each joined to R by its own veth pair (10.211.{1,2,3}.0/30, addresses that
 * exist only inside these namespaces). The endpoint in `ap` is checked by TCP on 127.0.0.1:7000,
 * which is each node's own loopback: B and C run a TCP service there, A does not, so A's path is
 * bad and B's and C's good (the same check id on all). Before the cut the quorum (2 observers of
 * 3) keeps `ap` up on every node. A is then cut from Redis by nftables inside A's namespace
 * (packets to and from Redis dropped: the TCP connection stays open and silent, as in a real
 * partition) while dnsperf queries A; while cut: A's `/status` says its store is disconnected and
 * `/metrics` that its view is stale; within the grace period A answers from its last view (`ap`);
 * after it A's own monitor decides alone (`ap` down on A); an override posted to B reaches C and
 * not A, one posted to A changes A's answer only; dnsperf through A gets only NOERROR. Once the
 * nftables table is deleted, both overrides are on every node, which answer alike. Needs root
 * (`ip netns`, `nft`): without it the test fails, never skips.
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

/** Drops every packet between A's namespace and Redis (10.211.1.1): a partition, not a closed link. */
const CUT_RULES = `table inet gslbd_cut {
  chain out { type filter hook output priority 0; policy accept; ip daddr 10.211.1.1 drop; }
  chain in { type filter hook input priority 0; policy accept; ip saddr 10.211.1.1 drop; }
}
`;

/**
 * Runs the system's `nft` (Debian package nftables) inside namespace `ns`. The search path leaves
 * out node_modules/.bin, where npm and ava put @vercel/nft's command of the same name.
 * @throws Error when nft fails (its stderr in the message).
 */
function nftIn(ns: string, ...args: string[]): void {
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((d) => !d.includes('node_modules'))
    .join(':');
  execFileSync('ip', ['netns', 'exec', ns, 'nft', ...args], { stdio: 'pipe', env: { ...process.env, PATH: path } });
}

/** Runs dnsperf inside namespace `ns` against 127.0.0.1:`port` (400 queries/s asked, 5 s before a query counts as lost). */
function dnsperfIn(ns: string, port: number, queryFile: string, seconds: number): Promise<DnsperfResult> {
  return new Promise((resolve, reject) => {
    const c = spawn(
      'ip',
      [
        'netns',
        'exec',
        ns,
        'dnsperf',
        '-s',
        '127.0.0.1',
        '-p',
        String(port),
        '-d',
        queryFile,
        '-l',
        String(seconds),
        '-Q',
        '400',
        '-c',
        '2',
        '-q',
        '20',
        '-t',
        '5',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
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

test('three nodes: one cut from Redis by nftables serves its last view under dnsperf (only NOERROR), decides alone after the grace period, and all converge on heal', async (t) => {
  if (process.getuid?.() !== 0) throw new Error('this test needs root (ip netns, veth): run it as root; it never skips');
  const tag = `gp${process.pid % 100_000}`;
  const [nsR, nsA, nsB, nsC] = [`${tag}r`, `${tag}a`, `${tag}b`, `${tag}c`];
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-partition-'));
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    await stopAllEngines();
    for (const c of children)
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await once(c, 'exit');
      }
    for (const ns of [nsR, nsA, nsB, nsC])
      try {
        ip('netns', 'del', ns);
      } catch {
        // never made
      }
    rmSync(dir, { recursive: true, force: true });
  });
  for (const ns of [nsR, nsA, nsB, nsC]) {
    ip('netns', 'add', ns);
    ip('-n', ns, 'link', 'set', 'lo', 'up');
  }
  for (const [i, ns] of [
    [1, nsA],
    [2, nsB],
    [3, nsC],
  ] as const) {
    ip('-n', nsR, 'link', 'add', `r${i}`, 'type', 'veth', 'peer', 'name', `e${i}`, 'netns', ns);
    ip('-n', nsR, 'addr', 'add', `10.211.${i}.1/30`, 'dev', `r${i}`);
    ip('-n', ns, 'addr', 'add', `10.211.${i}.2/30`, 'dev', `e${i}`);
    ip('-n', nsR, 'link', 'set', `r${i}`, 'up');
    ip('-n', ns, 'link', 'set', `e${i}`, 'up');
  }
  writeFileSync(
    join(dir, 'redis.conf'),
    ['port 6379', 'bind 10.211.1.1 10.211.2.1 10.211.3.1 127.0.0.1', 'protected-mode no', `dir ${dir}`, 'save ""', 'appendonly no', 'logfile ""'].join('\n') +
      '\n',
  );
  children.push(spawn('ip', ['netns', 'exec', nsR, 'redis-server', join(dir, 'redis.conf')], { stdio: 'ignore' }));
  // B's and C's good path to the endpoint: a TCP service on their own 127.0.0.1:7000 (A has none).
  for (const ns of [nsB, nsC])
    children.push(
      spawn('ip', ['netns', 'exec', ns, 'redis-server', '--port', '7000', '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
        stdio: 'ignore',
      }),
    );
  await waitFor('redis-server in its namespace', async () => (await inNs(nsR, 'redis-cli', ['PING']).catch(() => '')).trim() === 'PONG', 15_000);
  for (const ns of [nsB, nsC])
    await waitFor(`the TCP service in ${ns}`, async () => (await inNs(ns, 'redis-cli', ['-p', '7000', 'PING']).catch(() => '')).trim() === 'PONG', 15_000);

  const [a, b, c] = await Promise.all([
    startEngine(config('a', '10.211.1.1'), { netns: nsA }),
    startEngine(config('b', '10.211.2.1'), { netns: nsB }),
    startEngine(config('c', '10.211.3.1'), { netns: nsC }),
  ]);
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
    'every engine connected to Redis',
    async () => (await storeState(nsA, a)) === 'connected' && (await storeState(nsB, b)) === 'connected' && (await storeState(nsC, c)) === 'connected',
    15_000,
  );
  // Every node has voted (A down, B and C up): one node's bad path does not take ap down.
  await waitFor('A has checked ap (down from A)', async () => (await admin(nsA, a, 'GET', '/health')).includes('"down"'), 10_000);
  await new Promise((r) => setTimeout(r, 1000));
  t.is(await answer(nsA, a), `NOERROR:${ADDRESS.ap}`, 'quorum 2 of 3: A alone seeing ap down does not take it down');
  t.is(await answer(nsB, b), `NOERROR:${ADDRESS.ap}`);
  t.is(await answer(nsC, c), `NOERROR:${ADDRESS.ap}`);

  // The partition: nftables in A's namespace drops A's packets to and from Redis (A, B and C keep
  // running; B and C still reach Redis), while dnsperf queries A for a configured name.
  const queryFile = join(dir, 'queries');
  writeFileSync(queryFile, 'www.example.test A\nexample.test SOA\n');
  writeFileSync(join(dir, 'cut.nft'), CUT_RULES);
  const load = dnsperfIn(nsA, a.server.port, queryFile, GRACE_SECONDS + 10);
  nftIn(nsA, '-f', join(dir, 'cut.nft'));
  const cut = Date.now();
  let seenState = '';
  await waitFor(
    'A notices it is cut from Redis',
    async () => (seenState = await storeState(nsA, a).catch((e: Error) => e.message)) === 'disconnected',
    15_000,
    {
      detail: () => `A's store: ${seenState}`,
    },
  );
  t.log(`nftables cut → A's store disconnected after ${Date.now() - cut} ms`);
  t.is(await storeState(nsB, b), 'connected');
  t.regex(await admin(nsA, a, 'GET', '/metrics'), /^gslbd_store_connected 0$/m, 'A’s /metrics: store not connected');

  t.is(await answer(nsA, a), `NOERROR:${ADDRESS.ap}`, 'within the grace period A answers from the last votes');
  await override(nsB, b, 'ap');
  await waitFor('B answers its override', async () => (await answer(nsB, b)) === `NOERROR:${ADDRESS.eu}`, 5000);
  await waitFor('B’s override reaches C through Redis', async () => (await answer(nsC, c)) === `NOERROR:${ADDRESS.eu}`, 5000);
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
  t.is(await answer(nsC, c), `NOERROR:${ADDRESS.eu}`, 'nor C; and ap stays up there (B and C see it up)');
  const metricsOfA = await admin(nsA, a, 'GET', '/metrics');
  const stale = Number(/^gslbd_store_stale_seconds ([0-9.e+-]+)$/m.exec(metricsOfA)?.[1]);
  t.true(stale >= GRACE_SECONDS, `A’s /metrics marks its view stale (${stale} s)`);
  t.regex(metricsOfA, /^gslbd_health_quorum_deciding_alone 1$/m, 'A’s /metrics: deciding alone');
  t.regex(metricsOfA, /^gslbd_health_quorum_decisions_total\{status="down",basis="alone"\} [1-9]/m, 'A’s /metrics counts its decision alone (ap down)');
  t.regex(metricsOfA, /^gslbd_health_quorum_decisions_total\{status="up",basis="quorum"\} [1-9]/m, 'and the quorum’s up decision before the cut');

  const perf = await load;
  t.log(
    `dnsperf through A during the partition: ${perf.queriesPerSecond.toFixed(0)} queries/s, ${perf.completed} completed, ${JSON.stringify(perf.rcodes)}, lost ${perf.lost}`,
  );
  t.deepEqual(Object.keys(perf.rcodes), ['NOERROR'], 'dnsperf through the cut node: only NOERROR (no SERVFAIL, no NXDOMAIN)');
  t.is(perf.lost, 0);
  t.true(perf.completed > 0);

  // Heal: the nftables table goes; A reconnects, writes what it changed meanwhile, reloads every map.
  nftIn(nsA, 'delete', 'table', 'inet', 'gslbd_cut');
  const healed = Date.now();
  await waitFor('A reconnected', async () => (await storeState(nsA, a)) === 'connected', 60_000);
  await waitFor(
    'both overrides on every node',
    async () => (await Promise.all([answer(nsA, a), answer(nsB, b), answer(nsC, c)])).every((x) => x === `NOERROR:${ADDRESS.us}`),
    10_000,
  );
  t.log(`nftables table deleted → every node answers both overrides after ${Date.now() - healed} ms`);
});
