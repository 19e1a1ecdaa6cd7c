import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { aRecords, queryUdp } from '../health/dnsClient.js';
import { freePort } from '../support/freePort.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { startGslbd, type GslbdServer } from './harness/gslbdServer.js';
import { BENCH_DIST, REPO_ROOT } from './harness/paths.js';
import { processCpuSeconds } from './harness/processCpu.js';
import type { BenchProcess } from './harness/processes.js';
import { targetAddress } from './healthTargets.js';

/** Services (one record each), each with ENDPOINTS_PER_SERVICE endpoints in one data center. */
const SERVICES = 2_500;
const ENDPOINTS_PER_SERVICE = 4;
const ENDPOINTS = SERVICES * ENDPOINTS_PER_SERVICE;
const INTERVAL_MS = 20_000;
/** After the engines answer: two intervals, so every endpoint has been checked, voted and published. */
const WARMUP_MS = 2 * INTERVAL_MS;
/** Store operations, CPU and memory are measured over one interval with nothing else going on. */
const STEADY_MS = INTERVAL_MS;
/** Failure rounds per run, endpoints failed at once per round. */
const ROUNDS = 2;
const FAILURES = 25;
/** A failure not seen by every node within this long counts as this long (and is noted). */
const FAILURE_LIMIT_MS = 4 * INTERVAL_MS;
const POLL_MS = 250;
const NODES = ['a', 'b', 'c'] as const;

/**
 * The shared-state scenario of issue 21 (src/process/sharedState/README.md, "Measured"): 10,000
 * HTTP endpoints checked every 20 s by 3 engine processes through one real `redis-server`
 * (quorum 2, each check run by 2 of the 3 nodes chosen by rendezvous hashing), against the same
 * configuration on one engine with the embedded store, started one after the other. The health
 * targets are one Node process bound to 10,000 loopback addresses in 127.1.0.0/16 on one port
 * (`healthTargets.ts`); a real failure closes a target's listening socket (connections refused)
 * through its control port. Value: 1 / the p50 time from a failure to every node's DNS answer
 * without the endpoint (higher is better); details: p99, store commands/s (Redis's
 * `total_commands_processed`), and CPU % and RSS of each engine. On demand (`--filter shared-scale`: ~8 min a run).
 */
const group: BenchGroup = {
  name: 'shared-scale',
  description:
    '10,000 endpoints checked by 3 nodes through Redis (r = 2 of 3) vs. one embedded-store node: failure → every answer p50/p99, store ops/s, CPU, RSS',
  onDemand: true,
  tables: [
    {
      id: 'shared-scale',
      title: `${ENDPOINTS.toLocaleString('en')} HTTP endpoints every ${INTERVAL_MS / 1000} s: a real failure → every node's answer changed (${ROUNDS} × ${FAILURES} failures a run)`,
      measure: '1/s (1 / p50 failure → every answer)',
      baseline: 'embedded-1',
      rows: [
        { id: 'embedded-1', label: 'one engine, embedded store (checks every endpoint)' },
        { id: 'redis-3', label: '3 engines, one redis-server, quorum 2, checkers 2 of 3' },
      ],
    },
  ],
  estimateSeconds: (runs) => 30 + runs * 2 * (60 + (WARMUP_MS + STEADY_MS + ROUNDS * (FAILURE_LIMIT_MS + 2 * INTERVAL_MS)) / 1000),
  async run(ctx) {
    const dir = ctx.tempDir('shared-scale');
    const [port, control] = [await freePort(), await freePort()];
    ctx.log(`binding the HTTP targets to ${ENDPOINTS} loopback addresses`);
    const targets = ctx.processes.start(
      'health targets',
      process.execPath,
      [join(BENCH_DIST, 'healthTargets.js'), String(port), String(ENDPOINTS), String(control)],
      {
        cpu: 1,
        logFile: join(dir, 'targets.log'),
      },
    );
    for (let i = 0; !readFileSync(targets.logFile, 'utf8').includes(`ready ${ENDPOINTS}`); i++) {
      if (i > 1200) throw new Error(`HTTP targets not ready:\n${targets.tail()}`);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      await sleep(100);
    }
    for (let run = 1; run <= ctx.runs; run++)
      for (const row of ['embedded-1', 'redis-3'] as const) {
        if (!ctx.wants('shared-scale', row)) continue;
        const r = await measure(ctx, join(dir, `${row}-${run}`), row, port, control, run, targets.logFile);
        ctx.record('shared-scale', row, 1000 / r.p50Ms, r.details);
        ctx.log(`run ${run} ${row}: ${JSON.stringify(r.details)}`);
      }
    ctx.note(
      `${SERVICES} services × ${ENDPOINTS_PER_SERVICE} endpoints (one data center each, 4 data centers), one A record per service answering every up endpoint (static, balanceAlgorithm all); ` +
        `monitor http GET /health every ${INTERVAL_MS / 1000} s (timeout 2 s, rise 1, fall 1), targets: one Node process bound to ${ENDPOINTS} addresses in 127.1.0.0/16 (test/bench/healthTargets.ts), failures = its listening sockets closed; ` +
        `location data: the 4-line ip-location-db city fixture (test/fixtures/geo/ip-location-db-city.csv). Redis store: quorum observers 2, checkers 2 (each check run by 2 of 3 nodes), vote TTL 15 s. ` +
        `Per run: warm-up ${WARMUP_MS / 1000} s, then store commands/s, CPU and RSS over ${STEADY_MS / 1000} s, then ${ROUNDS} rounds of ${FAILURES} endpoints of different services failed at once, ` +
        `each node's answer polled every ${POLL_MS} ms until it lacks the address (time to the last node), then the targets bound again and every node back to 4 addresses. Engines a, c on CPU 0, b, targets and redis-server on CPU 1.`,
    );
  },
};
export default group;

interface ScaleResult {
  readonly p50Ms: number;
  readonly details: Record<string, number>;
}

async function measure(
  ctx: BenchContext,
  dir: string,
  row: 'embedded-1' | 'redis-3',
  port: number,
  control: number,
  run: number,
  targetsLog: string,
): Promise<ScaleResult> {
  mkdirSync(dir, { recursive: true });
  let redisPort: number | undefined;
  let redis: BenchProcess | undefined;
  if (row === 'redis-3') {
    redisPort = await freePort();
    redis = ctx.processes.start(
      'redis-server',
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      {
        cpu: 1,
        logFile: join(dir, 'redis.log'),
      },
    );
    await waitUntil(ctx, 'redis-server answers', () => redisCli(redisPort!, 'PING') === 'PONG', 20_000);
  }
  const names = row === 'redis-3' ? NODES : (['a'] as const);
  ctx.log(`${row}: starting ${names.length} engine(s) on ${ENDPOINTS} endpoints`);
  const engines = await Promise.all(
    names.map((node, i) => {
      mkdirSync(join(dir, node));
      return startGslbd(ctx.processes, { cpu: i === 1 ? 1 : 0, dir: join(dir, node), config: scaleConfig(port, node, redisPort) }, ctx.signal);
    }),
  );
  try {
    await waitUntil(
      ctx,
      'every node answers every address of r0',
      async () => (await Promise.all(engines.map((e) => answer(e, 0)))).every((a) => a.length === 4),
      120_000,
    );
    await sleep(WARMUP_MS);

    const commands = (): number =>
      redisPort === undefined ? 0 : Number(/total_commands_processed:(\d+)/.exec(redisCli(redisPort, 'INFO', 'stats'))?.[1] ?? 0);
    const cpuBefore = engines.map((e) => processCpuSeconds(e.process.pid));
    const commandsBefore = commands();
    // The targets print how many requests they answered every 5 s: the checks that reached them.
    const served = (): number => Number(/served (\d+)\n(?![\s\S]*served)/.exec(readFileSync(targetsLog, 'utf8'))?.[1] ?? 0);
    const servedBefore = served();
    const started = performance.now();
    await sleep(STEADY_MS);
    const seconds = (performance.now() - started) / 1000;
    const cpu = engines.map((e, i) => (100 * (processCpuSeconds(e.process.pid) - cpuBefore[i]!)) / seconds);
    const storeOps = (commands() - commandsBefore) / seconds;
    const checksServed = (served() - servedBefore) / seconds;
    const rss = engines.map((e) => statusKiB(e.process.pid, 'VmRSS') / 1024);

    const samples: number[] = [];
    let late = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Endpoints of different services, spread over the whole list; another set each round and run.
      const failed = Array.from({ length: FAILURES }, (_, k) => {
        const service = (k * Math.floor(SERVICES / FAILURES) + round * 7 + run * 3) % SERVICES;
        return { service, endpoint: service * ENDPOINTS_PER_SERVICE + ((k + round) % ENDPOINTS_PER_SERVICE) };
      });
      await fetch(`http://127.0.0.1:${control}/down?i=${failed.map((f) => f.endpoint).join(',')}`, { method: 'POST' });
      const failedAt = performance.now();
      const seen = failed.map(() => engines.map(() => 0));
      while (performance.now() - failedAt < FAILURE_LIMIT_MS && seen.some((s) => s.some((t) => t === 0))) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        await Promise.all(
          failed.map(async (f, k) =>
            Promise.all(
              engines.map(async (e, n) => {
                if (seen[k]![n] !== 0) return;
                const a = await answer(e, f.service).catch(() => undefined);
                if (a && !a.includes(endpointAddress(f.endpoint))) seen[k]![n] = performance.now() - failedAt;
              }),
            ),
          ),
        );
        await sleep(POLL_MS);
      }
      for (const s of seen) {
        if (s.some((t) => t === 0)) late++;
        samples.push(Math.max(...s.map((t) => (t === 0 ? FAILURE_LIMIT_MS : t))));
      }
      await fetch(`http://127.0.0.1:${control}/up`, { method: 'POST' });
      // Bound again: wait (at most two intervals) until every node answers them again; the rest are noted.
      const upAt = performance.now();
      let back = 0;
      while (performance.now() - upAt < 2 * INTERVAL_MS) {
        const all = await Promise.all(failed.flatMap((f) => engines.map((e) => answer(e, f.service).catch(() => []))));
        back = failed.filter((_, k) => engines.every((__, n) => all[k * engines.length + n]!.length === ENDPOINTS_PER_SERVICE)).length;
        if (back === failed.length) break;
        await sleep(1000);
      }
      if (back < failed.length)
        ctx.note(
          `run ${run} ${row} round ${round + 1}: ${failed.length - back} of ${failed.length} endpoints not answered again by every node ${(2 * INTERVAL_MS) / 1000} s after their targets were bound again`,
        );
    }
    if (late > 0)
      ctx.note(`run ${run} ${row}: ${late} failures not seen by every node within ${FAILURE_LIMIT_MS / 1000} s (counted as ${FAILURE_LIMIT_MS / 1000} s)`);
    samples.sort((x, y) => x - y);
    const pct = (p: number): number => samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))]!;
    const details: Record<string, number> = { 'p50 ms': pct(50), 'p99 ms': pct(99), 'store commands/s': storeOps, 'checks answered/s': checksServed };
    engines.forEach((_, i) => {
      details[`CPU % ${names[i]}`] = cpu[i]!;
      details[`RSS MiB ${names[i]}`] = rss[i]!;
    });
    return { p50Ms: pct(50), details };
  } finally {
    await Promise.all(engines.map((e) => ctx.processes.stop(e.process)));
    if (redis) await ctx.processes.stop(redis);
  }
}

/** The configuration of one node (`redisPort` absent: the embedded store). */
function scaleConfig(port: number, node: string, redisPort: number | undefined): Record<string, unknown> {
  const dcs = ['dc0', 'dc1', 'dc2', 'dc3'];
  return {
    ...(redisPort === undefined ? {} : { store: { redis: { url: `redis://127.0.0.1:${redisPort}`, node, namespace: 'scale', connectTimeoutSeconds: 10 } } }),
    geo: { sources: [{ format: 'ip-location-db-city', path: join(REPO_ROOT, 'test/fixtures/geo/ip-location-db-city.csv') }] },
    zones: [{ name: 'scale.test', ttl: 300, soa: { mname: 'ns1.scale.test', rname: 'hostmaster.scale.test' }, ns: ['ns1.scale.test'] }],
    datacenters: dcs.map((name) => ({ name })),
    services: Array.from({ length: SERVICES }, (_, s) => ({
      name: `svc${s}`,
      endpoints: Array.from({ length: ENDPOINTS_PER_SERVICE }, (_, k) => {
        const i = s * ENDPOINTS_PER_SERVICE + k;
        return { dc: dcs[s % dcs.length], address: endpointAddress(i), monitors: ['web'], check: { address: targetAddress(i), port } };
      }),
    })),
    records: Array.from({ length: SERVICES }, (_, s) => ({
      name: `r${s}.scale.test`,
      type: 'A',
      ttl: 30,
      service: `svc${s}`,
      policy: { type: 'static', pickDcCount: 1, balanceAlgorithm: 'all', rules: [{ dcs: [dcs[s % dcs.length]] }] },
      health: { allDown: 'fail-open' },
    })),
    health: {
      monitors: [{ name: 'web', type: 'http', path: '/health', intervalMs: INTERVAL_MS, timeoutMs: 2000, rise: 1, fall: 1 }],
      ...(redisPort === undefined ? {} : { quorum: { observers: 2, checkers: 2, voteTtlSeconds: 15, graceSeconds: 30 } }),
    },
  };
}

/** The answer address of endpoint `i`: 10.x.y.z, unique per endpoint. */
function endpointAddress(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

async function answer(e: GslbdServer, service: number): Promise<string[]> {
  return aRecords(await queryUdp(e.dnsPort, `r${service}.scale.test`, 'A', 10_000));
}

function redisCli(port: number, ...args: string[]): string {
  try {
    return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 5000 }).trim();
  } catch {
    return '';
  }
}

/** A field of `/proc/<pid>/status` in KiB (proc(5)). */
function statusKiB(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN);
}

async function waitUntil(ctx: BenchContext, what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (await Promise.resolve(ok()).catch(() => false)) return;
    if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(250);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
