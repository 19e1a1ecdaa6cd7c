import { presentData } from '../../src/core/dns/presentation.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { formatIp, parseCidr } from '../../src/core/net/ipAddress.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { type Query } from '../../src/core/model/query.js';
import type { Snapshot } from '../../src/pipeline/snapshot.js';
import { pinAllThreads } from './harness/affinity.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix } from './harness/clientMix.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';

/** Table id other groups add resolve() rows to (e.g. one row per balancing source). */
export const RESOLVE_TABLE = 'resolve';

/** Seconds of timed calls per row and run. */
const TIMED_SECONDS = 2;
/** Calls per timed batch: one clock read per batch keeps timer overhead under 1%. */
const BATCH = 64;
/** The CPU the in-process measurement is pinned to. */
const CPU = '1';

/**
 * resolve() decisions per second in-process on the quickstart snapshot (real GeoLite2 data,
 * looked up by the native addon as the engine does by default), single core, with p50/p99 latency of one call. Latency is taken
 * per batch of 64 calls (batch time / 64), so the p99 is of 64-call means: it hides single slow
 * calls (GC pauses show as a slow batch). `CPU µs/call` is the process's CPU time (all threads,
 * GC included) per call: less disturbed than wall time when other work shares the core.
 */
const group: BenchGroup = {
  name: 'resolve',
  description: 'resolve() in-process on the quickstart snapshot: decisions/s and p50/p99 latency, one core',
  tables: [
    {
      id: RESOLVE_TABLE,
      title: 'resolve() in-process, quickstart snapshot, 1 core',
      measure: 'decisions/s',
      baseline: 'www-static-proximity',
      rows: [
        { id: 'www-static-proximity', label: 'www A: static proximity, ECS client mix' },
        { id: 'static-aaaa', label: 'v6 AAAA: static record (no selection)' },
      ],
    },
  ],
  // The quickstart snapshot (compiled location data, answer classes) takes ~3 s once per bench
  // process; a row is 2 s plus its warm-up (200,000 calls). 13 s for 3 runs on the quiet machine
  // (2026-11-30).
  estimateSeconds: (runs) => 2 + runs * 2 * (TIMED_SECONDS + 1),
  async run(ctx) {
    ctx.log('loading the quickstart snapshot with the GeoLite2 data');
    const { snapshot, geo, engineGeo, loadSeconds } = quickstartSnapshot();
    ctx.note(
      `quickstart snapshot loaded in ${loadSeconds.toFixed(1)} s (${geo.v4.size} IPv4 and ${geo.v6.size} IPv6 merged ranges; lookups: ${engineGeo.implementation})`,
    );
    checkQuickstartAnswers(snapshot);
    const clients = clientMix(geo, 10_000, 2);
    await recordResolveRows(ctx, CPU, [
      {
        id: 'www-static-proximity',
        snapshot,
        queries: clients.map((client): Query => ({ name: 'www.example.test', type: TYPE_CODES.A, client, transport: 'udp' })),
      },
      { id: 'static-aaaa', snapshot, queries: clients.map((client): Query => ({ name: 'v6.example.test', type: TYPE_CODES.AAAA, client, transport: 'udp' })) },
    ]);
    ctx.note(
      `client mix: 10,000 ECS clients, 80% IPv4 /24 inside real networks, 10% IPv6 /56 inside real networks, 10% IPv4 /24 without a location; calls pinned to CPU ${CPU}; latency is per ${BATCH}-call batch`,
    );
  },
};

export default group;

/** The quickstart answers the README promises; a benchmark of wrong answers is worthless. */
function checkQuickstartAnswers(snapshot: Snapshot): void {
  const ctx = systemContext();
  const expected: [string, string][] = [
    ['8.8.8.0/24', '192.0.2.10'],
    ['193.0.14.0/24', '198.51.100.10'],
    ['202.12.27.0/24', '203.0.113.10'],
    ['1.1.1.0/24', '192.0.2.10'],
  ];
  for (const [subnet, want] of expected) {
    const { address, prefix } = parseCidr(subnet);
    const a = resolve(
      { name: 'www.example.test', type: TYPE_CODES.A, client: { address, sourcePrefix: prefix, fromEcs: true }, transport: 'udp' },
      snapshot,
      ctx,
    );
    const got = a.answers.map((r) => presentData(r.type, r.data)).join(',');
    if (got !== want) throw new Error(`quickstart answer for ${subnet} is ${got || 'empty'}, expected ${want} (client ${formatIp(address)})`);
  }
}

/** A resolve() row: the snapshot and the questions it is timed on, and details recorded with every run. */
export interface ResolveRow {
  readonly id: string;
  readonly snapshot: Snapshot;
  readonly queries: readonly Query[];
  readonly details?: Readonly<Record<string, number>>;
}

/**
 * Times the wanted rows of the resolve table {@link measureResolve}-style, `ctx.runs` times with
 * the rows interleaved, with every thread of this process pinned to `cpu`; records decisions/s with
 * p50/p99 latency and CPU per call.
 */
export async function recordResolveRows(ctx: BenchContext, cpu: string, rows: readonly ResolveRow[]): Promise<void> {
  const wanted = rows.filter((r) => ctx.wants(RESOLVE_TABLE, r.id));
  const restore = pinAllThreads(process.pid, cpu);
  try {
    for (let run = 1; run <= ctx.runs; run++) {
      for (const row of wanted) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const m = measureResolve(row.snapshot, row.queries);
        ctx.record(RESOLVE_TABLE, row.id, m.perSecond, { 'p50 µs': m.p50Us, 'p99 µs': m.p99Us, 'CPU µs/call': m.cpuUs, ...row.details });
        ctx.log(
          `run ${run} ${row.id}: ${Math.round(m.perSecond)} decisions/s, p50 ${m.p50Us.toFixed(2)} µs, p99 ${m.p99Us.toFixed(2)} µs, ${m.cpuUs.toFixed(2)} CPU µs/call`,
        );
      }
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    restore();
  }
}

/** Warms up, then times batches of calls for TIMED_SECONDS; returns the rate and batch-mean latency percentiles. */
export function measureResolve(snapshot: Snapshot, queries: readonly Query[]): { perSecond: number; p50Us: number; p99Us: number; cpuUs: number } {
  const ctx = systemContext();
  const n = queries.length;
  let sink = 0;
  for (let i = 0; i < 200_000; i++) sink += resolve(queries[i % n]!, snapshot, ctx).answers.length;
  const batchNs: number[] = [];
  let next = 0;
  const deadline = process.hrtime.bigint() + BigInt(TIMED_SECONDS * 1e9);
  let total = 0n;
  const cpuBefore = process.cpuUsage();
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < BATCH; i++) {
      sink += resolve(queries[next]!, snapshot, ctx).answers.length;
      next = next + 1 === n ? 0 : next + 1;
    }
    const t1 = process.hrtime.bigint();
    batchNs.push(Number(t1 - t0));
    total += t1 - t0;
    if (t1 >= deadline) break;
  }
  const cpu = process.cpuUsage(cpuBefore);
  if (sink === 0) throw new Error('resolve() answered nothing');
  batchNs.sort((a, b) => a - b);
  const pct = (p: number): number => batchNs[Math.min(batchNs.length - 1, Math.floor(p * batchNs.length))]! / BATCH / 1000;
  const calls = batchNs.length * BATCH;
  return { perSecond: calls / (Number(total) / 1e9), p50Us: pct(0.5), p99Us: pct(0.99), cpuUs: (cpu.user + cpu.system) / calls };
}
