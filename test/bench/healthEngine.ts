import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { configSchema, type Config } from '../../src/process/configSchema.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { Engine } from '../../src/pipeline/engine.js';
import { withHealthView } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { parseIp } from '../../src/core/net/ipAddress.js';
import { emptyLocationDb } from '../../src/core/location/locationDb.js';
import { HealthMonitor } from '../../src/capabilities/health/healthMonitor.js';
import { buildHealthPlan } from '../../src/capabilities/health/healthPlan.js';
import type { SavedState } from '../../src/capabilities/health/stateFile.js';
import { createLogger } from '../../src/core/telemetry/logger.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import type { Query } from '../../src/core/model/query.js';
import { targetAddress } from './healthTargets.js';

/**
 * The engine side of the health benchmark, one process (pinned by the caller): the real
 * configuration schema, snapshot, `Engine` and `HealthMonitor`, without front doors. `records`
 * GSLB records, each over its own service with one endpoint in each of 4 data centers, every
 * endpoint checked by HTTP (`GET /health`, one new connection per check) at its own loopback
 * address (`healthTargets.ts`); answers are 198.18.0.0/15 addresses.
 *
 * Mode `checks` starts the monitors; mode `idle` builds the same snapshot and never starts them
 * (the baseline), its endpoints up from a state file written just before (so resolve() answers
 * from the same health view as in steady checking, not from the cold-start rule's unknowns).
 * After `warmupMs` (start-up and V8's optimising compilers done) it measures two windows one after
 * the other, the checks running through both:
 * - `cpuMs`: the process's CPU time with nothing else running in it — no resolve() sampler and
 *   no event-loop delay monitor, whose 100 wake-ups per second each would otherwise be billed to
 *   the checks;
 * - `latencyMs`: resolve() latency from a sampler that every 10 ms times 32 single calls on
 *   random records, and the event-loop delay (with them, the process CPU minus the sampler's own
 *   time is reported too, as `sampledCpuPercent`).
 * Checks, failures and scheduler lag are counted over both windows, the peak RSS over both.
 * Prints one JSON line. Usage:
 *   node healthEngine.js <checks|idle> <targetPort> <records> <intervalMs> <warmupMs> <cpuMs> <latencyMs>
 */

/** The JSON line this script prints (read by health.bench.ts). */
export interface HealthEngineResult {
  mode: string;
  endpoints: number;
  upAtStart: number;
  /** Checks finished in the CPU window. */
  cpuChecks: number;
  /** Checks finished in both windows. */
  checks: number;
  failedChecks: number;
  failureReasons: Record<string, number>;
  /** Process CPU % of one core in the CPU window. */
  cpuPercent: number;
  /** Kernel (system) CPU % of one core, part of `cpuPercent`. */
  sysCpuPercent: number;
  /** Process CPU % in the latency window minus the sampler's own time (the wake-ups stay in). */
  sampledCpuPercent: number;
  samplerCpuPercent: number;
  rssMiBPeak: number;
  /** V8 heap reserved (`heapTotal`) and memory outside it (`external`) when the RSS peaked. */
  heapTotalMiBAtPeak: number;
  externalMiBAtPeak: number;
  heapMiB: number;
  /** Heap after a full collection (only with --expose-gc), else NaN. */
  liveHeapMiB: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  loopDelayP99Ms: number;
  resolveCalls: number;
  resolveP50Us: number;
  resolveP99Us: number;
  resolveMeanUs: number;
  publishes: number;
}

function liveHeapMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return NaN;
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Deterministic uniform numbers (fixed seed) for the sampler's record choice. */
function seeded(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** The benchmark configuration as the YAML would give it (validated by the real schema). */
export function benchConfig(targetPort: number, records: number, intervalMs: number): unknown {
  const dcs = ['dc0', 'dc1', 'dc2', 'dc3'];
  const answer = (i: number): string => `198.18.${Math.floor(i / 256)}.${i % 256}`;
  return {
    logging: { level: 'warn' },
    zones: [{ name: 'bench.test', soa: { mname: 'ns1.bench.test', rname: 'hostmaster.bench.test', serial: 1 }, ns: ['ns1.bench.test'] }],
    datacenters: dcs.map((name) => ({ name })),
    services: Array.from({ length: records }, (_, r) => ({
      name: `svc${r}`,
      endpoints: dcs.map((dc, d) => ({ dc, address: answer(r * 4 + d), monitors: ['http'], check: { address: targetAddress(r * 4 + d), port: targetPort } })),
    })),
    records: Array.from({ length: records }, (_, r) => ({
      name: `www${r}.bench.test`,
      type: 'A',
      ttl: 30,
      service: `svc${r}`,
      policy: { type: 'static-proximity', pickDcCount: 1, balanceAlgorithm: 'round-robin' },
    })),
    health: { monitors: [{ name: 'http', type: 'http', path: '/health', intervalMs, timeoutMs: 2000, rise: 2, fall: 3, jitter: 0.1 }] },
  };
}

/** Writes a state file with every check of `config` up (written now), for the idle engine; returns its path. */
function writeAllUpState(config: Config): string {
  const now = Date.now();
  const checks = Object.fromEntries(
    [...buildHealthPlan(config).checks.values()].map((c) => [c.id, { fingerprint: c.fingerprint, status: 'up' as const, sinceMs: now, lastSuccessMs: now }]),
  );
  const path = join(mkdtempSync(join(tmpdir(), 'gslbd-health-bench-')), 'state.json');
  writeFileSync(path, JSON.stringify({ version: 1, writtenAtMs: now, checks, overrides: {} } satisfies SavedState));
  return path;
}

/** The process's CPU time (user + system, and system alone) and the wall time over `ms` (ns). */
async function measureCpu(ms: number): Promise<{ cpuNs: number; sysNs: number; wallNs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, ms));
  const wallNs = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  return { cpuNs: (cpu.user + cpu.system) * 1000, sysNs: cpu.system * 1000, wallNs };
}

async function main(): Promise<void> {
  const [mode, ...numbers] = process.argv.slice(2);
  const [targetPort, records, intervalMs, warmupMs, cpuMs, latencyMs] = numbers.map(Number) as [number, number, number, number, number, number];
  if (
    (mode !== 'checks' && mode !== 'idle') ||
    numbers.length !== 6 ||
    [targetPort, records, intervalMs, warmupMs, cpuMs, latencyMs].some((n) => !Number.isFinite(n) || n <= 0)
  ) {
    process.stderr.write('usage: healthEngine.js <checks|idle> <targetPort> <records> <intervalMs> <warmupMs> <cpuMs> <latencyMs>\n');
    process.exit(2);
  }
  const config = configSchema.parse(benchConfig(targetPort, records, intervalMs));
  const file = '/tmp/health-bench.yaml';
  if (mode === 'idle') config.health.stateFile = writeAllUpState(config);
  const log = createLogger('warn', 2);
  let measuring = false;
  let checks = 0;
  let cpuChecks = 0;
  let inCpuWindow = false;
  let failed = 0;
  const failures = new Map<string, number>();
  const lags: number[] = [];
  const monitor = new HealthMonitor({
    log,
    registry: new Registry(),
    onCheck: (_id, outcome, lagMs) => {
      if (!measuring) return;
      checks++;
      if (inCpuWindow) cpuChecks++;
      if (!outcome.ok) {
        failed++;
        failures.set(outcome.error, (failures.get(outcome.error) ?? 0) + 1);
      }
      lags.push(lagMs);
    },
  });
  const snapshot = buildSnapshot(file, config, { geo: emptyLocationDb(), health: monitor.configure(config, file), metrics: emptyMetricView }, Date.now());
  const engine = new Engine(snapshot, systemContext(), log);
  let publishes = 0;
  monitor.onChange((view) => {
    engine.publish(withHealthView(engine.snapshot, view));
    if (measuring) publishes++;
  });
  if (mode === 'checks') monitor.start();

  const endpoints = records * 4;
  const client = { address: parseIp('192.0.2.200'), sourcePrefix: 32, fromEcs: false };
  const queries: Query[] = Array.from({ length: records }, (_, r) => ({ name: `www${r}.bench.test`, type: TYPE_CODES.A, client, transport: 'udp' as const }));
  const random = seeded(42);
  // Warm up resolve() too, so the JIT has compiled it before measuring.
  for (let i = 0; i < 50_000; i++) engine.resolveLocal(queries[i % records]!);
  await new Promise((r) => setTimeout(r, warmupMs));

  const upAtStart = monitor.report().endpoints.filter((e) => e.status === 'up').length;
  let atPeak = process.memoryUsage();
  let rssPeak = atPeak.rss;
  const samplePeak = (): void => {
    const m = process.memoryUsage();
    if (m.rss >= rssPeak) [rssPeak, atPeak] = [m.rss, m];
  };
  const rssTimer = setInterval(samplePeak, 250);
  measuring = true;

  inCpuWindow = true;
  const cpuWindow = await measureCpu(cpuMs);
  inCpuWindow = false;

  const callNs: number[] = [];
  let samplerNs = 0n;
  const sampler = setInterval(() => {
    const s0 = process.hrtime.bigint();
    for (let i = 0; i < 32; i++) {
      const q = queries[Math.floor(random() * records)]!;
      const t0 = process.hrtime.bigint();
      const a = engine.resolveLocal(q);
      const t1 = process.hrtime.bigint();
      if (a.answers.length !== 1) throw new Error(`${q.name}: ${a.answers.length} answers`);
      callNs.push(Number(t1 - t0));
    }
    samplerNs += process.hrtime.bigint() - s0;
  }, 10);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const latencyWindow = await measureCpu(latencyMs);
  measuring = false;
  loop.disable();
  clearInterval(sampler);
  clearInterval(rssTimer);
  samplePeak();

  callNs.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  const result: HealthEngineResult = {
    mode,
    endpoints,
    upAtStart,
    cpuChecks,
    checks,
    failedChecks: failed,
    failureReasons: Object.fromEntries(failures),
    cpuPercent: (100 * cpuWindow.cpuNs) / cpuWindow.wallNs,
    sysCpuPercent: (100 * cpuWindow.sysNs) / cpuWindow.wallNs,
    sampledCpuPercent: (100 * (latencyWindow.cpuNs - Number(samplerNs))) / latencyWindow.wallNs,
    samplerCpuPercent: (100 * Number(samplerNs)) / latencyWindow.wallNs,
    rssMiBPeak: rssPeak / 2 ** 20,
    heapTotalMiBAtPeak: atPeak.heapTotal / 2 ** 20,
    externalMiBAtPeak: atPeak.external / 2 ** 20,
    heapMiB: process.memoryUsage().heapUsed / 2 ** 20,
    liveHeapMiB: liveHeapMiB(),
    lagP50Ms: percentile(lags, 0.5),
    lagP99Ms: percentile(lags, 0.99),
    lagMaxMs: lags.length > 0 ? lags[lags.length - 1]! : NaN,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
    resolveCalls: callNs.length,
    resolveP50Us: percentile(callNs, 0.5) / 1000,
    resolveP99Us: percentile(callNs, 0.99) / 1000,
    resolveMeanUs: callNs.reduce((a, b) => a + b, 0) / callNs.length / 1000,
    publishes,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await monitor.stop();
  process.exit(0);
}

if (process.argv[1]?.endsWith('healthEngine.js')) void main();
