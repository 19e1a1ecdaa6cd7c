import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { freePort } from '../support/freePort.js';
import { BENCH_DIST } from './harness/paths.js';
import { targetAddress } from './healthTargets.js';
import type { HealthEngineResult } from './healthEngine.js';

/** GSLB records; each has 4 endpoints, so 4 × RECORDS HTTP endpoints are checked. */
const RECORDS = 2_500;
const ENDPOINTS = RECORDS * 4;
const INTERVAL_MS = 5_000;
/**
 * After start: two intervals, so every endpoint has been checked and published, and V8's
 * optimising compilers, busy for the first ≈ 10 s (docs/BENCHMARKS-HISTORY.md, health: investigations), are done.
 */
const WARMUP_MS = { checks: 2 * INTERVAL_MS, idle: 2_000 };
/** CPU measured with nothing else in the engine: two intervals (every endpoint checked twice). */
const CPU_MS = { checks: 2 * INTERVAL_MS, idle: 2_000 };
/** resolve() latency and event-loop delay, sampled while the checks go on. */
const LATENCY_MS = 5_000;
const TARGET_CPU = 0;
const ENGINE_CPU = 1;

/**
 * Health monitoring at scale (issue: health monitors): 10,000 HTTP endpoints checked every 5 s
 * (2,000 checks/s, one new connection per check, `GET /health`) against a local HTTP server
 * listening on 10,000 loopback addresses in 127.1.0.0/16, beside the same engine with its
 * monitors not started. The value is resolve() decisions/s implied by the sampled per-call time
 * while checks run; the details carry the targets: engine CPU % of one core (≤ 15 %), peak RSS
 * (≤ 200 MiB), check-scheduling lag p99, event-loop delay p99 and resolve() p99.
 */
const group: BenchGroup = {
  name: 'health',
  description: 'health checks: 10,000 HTTP endpoints every 5 s (2,000 checks/s) vs. an idle engine; CPU, RSS, lag, resolve() latency',
  tables: [
    {
      id: 'health',
      title: `resolve() while ${ENDPOINTS.toLocaleString('en')} HTTP endpoints are checked every ${INTERVAL_MS / 1000} s (engine CPU ${ENGINE_CPU}, HTTP server CPU ${TARGET_CPU})`,
      measure: 'decisions/s',
      baseline: 'idle',
      rows: [
        { id: 'idle', label: `same ${RECORDS} records, monitors not started` },
        { id: 'checks-10k', label: `${ENDPOINTS} HTTP endpoints, 2,000 checks/s, new connection each` },
      ],
    },
  ],
  // ~10 s to bind the addresses, ~3 s to start an engine (67 s for 3 runs of 11.5 and 7 s on the quiet machine, 2026-11-30).
  estimateSeconds: (runs) => 10 + runs * (2 * 3 + (WARMUP_MS.idle + CPU_MS.idle + WARMUP_MS.checks + CPU_MS.checks + 2 * LATENCY_MS) / 1000),
  async run(ctx) {
    const dir = ctx.tempDir('health');
    const port = await freePort();
    ctx.log(`binding the HTTP server to ${ENDPOINTS} loopback addresses`);
    const targets = ctx.processes.start('health targets', process.execPath, [join(BENCH_DIST, 'healthTargets.js'), String(port), String(ENDPOINTS)], {
      cpu: TARGET_CPU,
      logFile: join(dir, 'targets.log'),
    });
    for (let i = 0; ; i++) {
      if (readFileSync(targets.logFile, 'utf8').includes(`ready ${ENDPOINTS}`)) break;
      if (i > 600) throw new Error(`HTTP targets not ready:\n${targets.tail()}`);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      await new Promise((r) => setTimeout(r, 100));
    }
    const probe = await fetch(`http://${targetAddress(ENDPOINTS - 1)}:${port}/health`);
    if (probe.status !== 200) throw new Error(`HTTP target answered ${probe.status}`);

    for (let run = 1; run <= ctx.runs; run++) {
      for (const [row, mode] of [
        ['idle', 'idle'],
        ['checks-10k', 'checks'],
      ] as const) {
        if (!ctx.wants('health', row)) continue;
        const r = await runEngine(ctx, dir, mode, port, run);
        if (mode === 'idle' && r.upAtStart !== ENDPOINTS) throw new Error(`idle engine: ${r.upAtStart} of ${ENDPOINTS} endpoints up from the state file`);
        if (mode === 'checks' && r.upAtStart < ENDPOINTS)
          ctx.note(
            `run ${run}: ${r.upAtStart} of ${ENDPOINTS} endpoints up after the warm-up (checks not yet run or failed: the engine or the HTTP server was starved of CPU)`,
          );
        const checksPerSecond = r.cpuChecks / (CPU_MS.checks / 1000);
        ctx.record('health', row, 1e6 / r.resolveMeanUs, {
          'resolve p50 µs': r.resolveP50Us,
          'resolve p99 µs': r.resolveP99Us,
          'engine CPU %': r.cpuPercent,
          'CPU % while sampled': r.sampledCpuPercent,
          ...(mode === 'checks'
            ? {
                'checks/s': checksPerSecond,
                'CPU µs/check': (r.cpuPercent * 10_000) / checksPerSecond,
                'kernel µs/check': (r.sysCpuPercent * 10_000) / checksPerSecond,
                'failed checks': r.failedChecks,
                'lag p99 ms': r.lagP99Ms,
              }
            : {}),
          'loop delay p99 ms': r.loopDelayP99Ms,
          'RSS peak MiB': r.rssMiBPeak,
          'live heap MiB': r.liveHeapMiB,
        });
        ctx.log(
          `run ${run} ${row}: CPU ${r.cpuPercent.toFixed(1)} %, RSS ${r.rssMiBPeak.toFixed(0)} MiB, ${r.checks} checks (${r.failedChecks} failed), lag p99 ${r.lagP99Ms?.toFixed(1)} ms, resolve p99 ${r.resolveP99Us.toFixed(1)} µs`,
        );
        if (r.failedChecks > 0) ctx.note(`run ${run}: ${r.failedChecks} failed checks: ${JSON.stringify(r.failureReasons)}`);
      }
    }
    ctx.note(
      `${RECORDS} GSLB records × 4 data centers = ${ENDPOINTS} endpoints, monitor http GET /health every ${INTERVAL_MS} ms (jitter 0.1, timeout 2 s), answered by one Node HTTP server bound to ${ENDPOINTS} addresses in 127.1.0.0/16; ` +
        `engine = the real schema, snapshot, Engine and HealthMonitor in one process (healthEngine.ts), no front doors; warm-up ${WARMUP_MS.checks / 1000} s, then engine CPU % over ${CPU_MS.checks / 1000} s with nothing else in the process, then ${LATENCY_MS / 1000} s of resolve() sampling (32 timed calls every 10 ms on random records) while the checks go on; ` +
        '"CPU % while sampled" is the process CPU of the sampling window minus the sampler\'s own time (its 100 wake-ups per second stay in); decisions/s = 1 / mean sampled call time; live heap = heap after a full collection at the end. ' +
        "On loopback the kernel work of the server side of each connection is partly charged to the engine (sys time). Reference from a peer's documentation: 10k records × 3 backends ≈ 60 % CPU and 667 MB.",
    );
  },
};

export default group;

async function runEngine(ctx: BenchContext, dir: string, mode: 'idle' | 'checks', port: number, run: number): Promise<HealthEngineResult> {
  // --expose-gc: after measuring, the engine collects once and reports the live heap beside the RSS.
  // --cpu-prof: the engine writes its profile when it exits (summarise with cpuProfileTop.js --from fire).
  const profile = ctx.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.cpuProfileDir}`] : [];
  const args = [
    '--expose-gc',
    ...profile,
    join(BENCH_DIST, 'healthEngine.js'),
    mode,
    String(port),
    String(RECORDS),
    String(INTERVAL_MS),
    String(WARMUP_MS[mode]),
    String(CPU_MS[mode]),
    String(LATENCY_MS),
  ];
  const { code, output } = await ctx.processes.runToEnd(
    'health engine',
    process.execPath,
    args,
    { cpu: ENGINE_CPU, logFile: join(dir, `engine-${mode}-${run}.log`) },
    ctx.signal,
  );
  const line = output.split('\n').find((l) => l.startsWith('{'));
  if (code !== 0 || !line) throw new Error(`health engine (${mode}) exited with ${code}:\n${output.slice(-2000)}`);
  return JSON.parse(line) as HealthEngineResult;
}
