import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { parse } from 'yaml';
import { presentData } from '../../src/core/dns/presentation.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { TIMING_SAMPLE } from '../../src/doors/answerWrapper.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import type { Snapshot } from '../../src/pipeline/snapshot.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { type Query } from '../../src/core/model/query.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix, type MixClient } from './harness/clientMix.js';
import { exchange, lengthPrefixed, queryPacket, type WireAnswer } from './harness/dnsWire.js';
import { runDnsperf, type DnsperfResult } from './harness/dnsperf.js';
import { startGdnsd } from './harness/gdnsdServer.js';
import { GSLBD_NODE_FLAGS, startGslbd, type GslbdServer } from './harness/gslbdServer.js';
import { freePort } from '../support/freePort.js';
import { BENCH_DIST, QUICKSTART_CONFIG } from './harness/paths.js';
import { processCpuSeconds, threadCpuSeconds } from './harness/processCpu.js';
import type { BenchProcess } from './harness/processes.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';

/** Servers run on CPU 0, dnsperf on CPU 1. */
const SERVER_CPU = 0;
const LOAD_CPU = 1;
/** dnsperf seconds per timed run, and per warm-up run (JIT, caches) before the first timed one. */
const RUN_SECONDS = 3;
const WARMUP_SECONDS = 1;
/** ECS clients in the GSLB query file and how many of them are checked answer by answer. */
const GSLB_CLIENTS = 10_000;
const CHECKED_CLIENTS = 300;

const STATIC_NAMES: readonly [string, dnsPacket.RecordType][] = [
  ['v6.example.test', 'AAAA'],
  ['ns1.example.test', 'A'],
  ['example.test', 'SOA'],
];

type QueryKind = 'static' | 'gslb';
/** Table id of the GSLB-name listener rows; other groups add their records' rows to it. */
export const LISTENER_GSLB_TABLE = 'listener-gslb';
const TABLE: Record<QueryKind, string> = { static: 'listener-static', gslb: LISTENER_GSLB_TABLE };
type ServerName = 'node' | 'gdnsd' | 'gslbd';
const ROW: Record<QueryKind, Record<ServerName, string>> = {
  static: { node: 'node-fixed-packet', gdnsd: 'gdnsd', gslbd: 'gslbd' },
  gslb: { node: 'node-fixed-packet', gdnsd: 'gdnsd-geoip-nets', gslbd: 'gslbd' },
};
/**
 * What the per-zone and per-record query counters cost the query path: the GSLB query file against
 * the group's gslbd (the default `queryCounters`: per zone, top 20 records) and against a second
 * gslbd with both off, in the same interleaved runs. Its own table, so `--filter
 * listener-query-counters` measures it without gdnsd.
 */
const COUNTERS_TABLE = 'listener-query-counters';
const COUNTERS_ROW = { off: 'gslbd-query-counters-off', on: 'gslbd-query-counters-on' } as const;

/** One dnsperf run of the plan: the query kind, the server it goes to, and where it is recorded. */
interface PlannedRun {
  readonly kind: QueryKind;
  readonly server: ServerName | 'gslbdNoCounters';
  readonly table: string;
  readonly row: string;
}

/**
 * The standalone listener under dnsperf on loopback (UDP), beside the Node runtime's ceiling (a
 * responder sending one precomputed packet) and the native ceiling (gdnsd), in two tables: static
 * names, and the GSLB name with ECS from a realistic client mix. Servers are pinned to CPU 0,
 * dnsperf to CPU 1; runs interleave the servers so drifting background load hits all of them.
 * Details: server CPU per query (from /proc), lost queries, and for gslbd the share of its CPU
 * spent inside resolve() during the same run (see {@link resolveShare}).
 */
const group: BenchGroup = {
  name: 'listener',
  description: 'standalone listener queries/s under dnsperf vs a fixed-packet Node responder and gdnsd; resolve() share of CPU',
  tables: [
    {
      id: TABLE.static,
      title: `standalone listener, static names (dnsperf UDP ${RUN_SECONDS} s runs; server CPU ${SERVER_CPU}, dnsperf CPU ${LOAD_CPU})`,
      measure: 'queries/s',
      baseline: ROW.static.node,
      rows: [
        { id: ROW.static.node, label: 'Node UDP responder, fixed packet (runtime ceiling)' },
        { id: ROW.static.gdnsd, label: 'gdnsd 3.8, same zone (native ceiling)' },
        { id: ROW.static.gslbd, label: 'gslbd standalone listener' },
      ],
    },
    {
      id: TABLE.gslb,
      title: `standalone listener, GSLB name www A with ECS client mix (dnsperf -B, ${RUN_SECONDS} s runs)`,
      measure: 'queries/s',
      baseline: ROW.gslb.node,
      rows: [
        { id: ROW.gslb.node, label: 'Node UDP responder, fixed packet (runtime ceiling)' },
        { id: ROW.gslb.gdnsd, label: 'gdnsd 3.8 geoip plugin, nets from the same decisions (native ceiling)' },
        { id: ROW.gslb.gslbd, label: 'gslbd standalone listener, static proximity' },
      ],
    },
    {
      id: COUNTERS_TABLE,
      title: `standalone listener, query counters on vs off, GSLB name www A with ECS client mix (dnsperf -B, ${RUN_SECONDS} s runs)`,
      measure: 'queries/s',
      baseline: COUNTERS_ROW.off,
      rows: [
        { id: COUNTERS_ROW.off, label: 'gslbd, queryCounters { zones: false, topRecords: 0 }' },
        { id: COUNTERS_ROW.on, label: 'gslbd, queryCounters by default (per zone, top 20 records)' },
      ],
    },
  ],
  // Measured 97 s for 3 runs at load 12: set-up ~22 s (the snapshot, gslbd's start, gdnsd's nets
  // from 3.6M ranges and its start, answer checks), ~0.6 s per dnsperf run besides its own seconds.
  // On the quiet machine (2026-11-30) 71–72 s for 3 runs: the set-up term is 10 s.
  // The query-counters table adds two runs per round.
  estimateSeconds: (runs) => 10 + 8 * (WARMUP_SECONDS + 0.7) + runs * 8 * (RUN_SECONDS + 0.7),
  async run(ctx) {
    const dir = ctx.tempDir('listener');
    const nodeArgs = [...GSLBD_NODE_FLAGS, ...(ctx.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.cpuProfileDir}`] : [])];
    const gslbdStarting = startGslbd(ctx.processes, { cpu: SERVER_CPU, dir: ctx.tempDir('gslbd'), nodeArgs }, ctx.signal);
    gslbdStarting.catch(() => undefined);
    const countersCompared = ctx.wants(COUNTERS_TABLE, COUNTERS_ROW.on);
    const noCountersConfig = parse(readFileSync(QUICKSTART_CONFIG, 'utf8')) as Record<string, unknown>;
    noCountersConfig.queryCounters = { zones: false, topRecords: 0 };
    const noCountersStarting = countersCompared
      ? startGslbd(ctx.processes, { cpu: SERVER_CPU, dir: ctx.tempDir('gslbd-no-counters'), nodeArgs, config: noCountersConfig }, ctx.signal)
      : undefined;
    noCountersStarting?.catch(() => undefined);
    ctx.log('loading the quickstart snapshot (query files, gdnsd nets, answer checks)');
    const { snapshot, geo } = quickstartSnapshot();
    const clients = clientMix(geo, GSLB_CLIENTS, 3);

    const staticFile = join(dir, 'static.txt');
    writeFileSync(staticFile, `${STATIC_NAMES.map(([n, t]) => `${n} ${t}`).join('\n')}\n`);
    const gslbFile = join(dir, 'gslb-ecs.bin');
    writeFileSync(gslbFile, lengthPrefixed(clients.map((c, i) => queryPacket(i & 0xffff, 'www.example.test', 'A', c))));

    const responders = {
      static: await startResponder(ctx, fixedReply('v6.example.test', 'AAAA', '2001:db8::10', false), dir),
      gslb: await startResponder(ctx, fixedReply('www.example.test', 'A', '198.51.100.10', true), dir),
    };
    // gdnsd's nets take the longest set-up: only when one of its rows is measured.
    const gdnsdWanted = (['static', 'gslb'] as const).some((k) => ctx.wants(TABLE[k], ROW[k].gdnsd));
    let gdnsd: Awaited<ReturnType<typeof startGdnsd>> | undefined;
    if (gdnsdWanted) {
      ctx.log('writing gdnsd nets from the quickstart decisions and starting gdnsd');
      gdnsd = await startGdnsd(ctx.processes, snapshot, geo, ctx.tempDir('gdnsd'), SERVER_CPU, ctx.signal);
      ctx.note(`gdnsd geoip map: ${gdnsd.nets} nets lines from gslbd's decisions; ${gdnsd.tiedLocations} locations are ties that gslbd splits by rotation`);
    }
    ctx.log('waiting for gslbd to load its location data');
    const gslbd = await gslbdStarting;
    const gslbdNoCounters = await noCountersStarting;

    await checkAnswers(ctx, clients, gslbd.dnsPort, gdnsd?.port);
    if (gslbdNoCounters) await checkAnswers(ctx, clients, gslbdNoCounters.dnsPort, undefined);

    const servers: Record<PlannedRun['server'], { port: (k: QueryKind) => number; proc: (k: QueryKind) => BenchProcess; gslbd?: GslbdServer }> = {
      node: { port: (k) => responders[k].port, proc: (k) => responders[k].proc },
      gdnsd: { port: () => gdnsd!.port, proc: () => gdnsd!.process },
      gslbd: { port: () => gslbd.dnsPort, proc: () => gslbd.process, gslbd },
      gslbdNoCounters: { port: () => gslbdNoCounters!.dnsPort, proc: () => gslbdNoCounters!.process, gslbd: gslbdNoCounters },
    };
    const files: Record<QueryKind, { queryFile: string; binary: boolean; edns: boolean }> = {
      static: { queryFile: staticFile, binary: false, edns: true },
      gslb: { queryFile: gslbFile, binary: true, edns: false },
    };
    // The same questions as the query files, for the in-process cost of resolve() per call.
    const queries: Record<QueryKind, Query[]> = {
      static: STATIC_NAMES.map(([name, type]) => ({ name, type: TYPE_CODES[type as keyof typeof TYPE_CODES], client: clients[0]!, transport: 'udp' })),
      gslb: clients.map((client) => ({ name: 'www.example.test', type: TYPE_CODES.A, client, transport: 'udp' })),
    };
    const plan: PlannedRun[] = (['static', 'gslb'] as const).flatMap((kind) =>
      (['node', 'gdnsd', 'gslbd'] as const)
        .filter((s) => ctx.wants(TABLE[kind], ROW[kind][s]))
        .map((server) => ({ kind, server, table: TABLE[kind], row: ROW[kind][server] })),
    );
    if (countersCompared) {
      plan.push({ kind: 'gslb', server: 'gslbdNoCounters', table: COUNTERS_TABLE, row: COUNTERS_ROW.off });
      plan.push({ kind: 'gslb', server: 'gslbd', table: COUNTERS_TABLE, row: COUNTERS_ROW.on });
    }
    const dnsperf = (kind: QueryKind, server: PlannedRun['server'], seconds: number): Promise<DnsperfResult> =>
      runDnsperf(ctx.processes, { server: '127.0.0.1', port: servers[server].port(kind), ...files[kind], seconds, cpu: LOAD_CPU }, dir, ctx.signal);

    ctx.log('warm-up runs');
    for (const { kind, server } of plan) await dnsperf(kind, server, WARMUP_SECONDS);
    for (let run = 1; run <= ctx.runs; run++) {
      for (const { kind, server, table, row } of plan) {
        const proc = servers[server].proc(kind);
        const served = servers[server].gslbd;
        const before = { cpu: processCpuSeconds(proc.pid), metrics: served ? await served.scrape() : undefined };
        const r = await dnsperf(kind, server, RUN_SECONDS);
        const cpu = processCpuSeconds(proc.pid) - before.cpu;
        const details: Record<string, number> = {
          'server CPU µs/query': (cpu / r.completed) * 1e6,
          'lost %': (100 * r.lost) / (r.completed + r.lost),
        };
        if (served) Object.assign(details, await resolveShare(served, before.metrics!, cpu, r, resolveCpuPerCall(queries[kind])));
        const notNoError = r.completed - (r.rcodes.NOERROR ?? 0);
        if (notNoError > 0) {
          details['not NOERROR %'] = (100 * notNoError) / r.completed;
          ctx.note(`${server} ${kind} run ${run}: ${notNoError} answers not NOERROR (${JSON.stringify(r.rcodes)})`);
        }
        ctx.record(table, row, r.queriesPerSecond, details);
        ctx.log(
          `run ${run} ${kind} ${server}: ${Math.round(r.queriesPerSecond)} q/s, ${details['server CPU µs/query']!.toFixed(1)} µs CPU/query, lost ${r.lost}`,
        );
      }
    }
    ctx.note(
      `static query file: ${STATIC_NAMES.map(([n, t]) => `${n} ${t}`).join(', ')} with EDNS (dnsperf -e); ` +
        `GSLB query file: ${GSLB_CLIENTS} www A queries with ECS from the resolve group's client mix (dnsperf -B, since -E sends one fixed option)`,
    );
  },
};

export default group;

/** The reply the fixed-packet responder sends for a query kind: a plausible answer of the same size. */
function fixedReply(name: string, type: 'A' | 'AAAA', data: string, ecs: boolean): Buffer {
  const options = ecs ? [{ code: 8, family: 1, sourcePrefixLength: 24, scopePrefixLength: 20, ip: '193.0.14.0' }] : [];
  return dnsPacket.encode({
    type: 'response',
    id: 0,
    flags: dnsPacket.AUTHORITATIVE_ANSWER,
    questions: [{ name, type, class: 'IN' }],
    answers: [{ name, type, ttl: ecs ? 30 : 300, data }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, options } as unknown as dnsPacket.Answer],
  });
}

async function startResponder(ctx: BenchContext, reply: Buffer, dir: string): Promise<{ port: number; proc: BenchProcess }> {
  const port = await freePort();
  // gslbd's production Node flags, as gslbd gets them: equal settings.
  const proc = ctx.processes.start(
    'fixed responder',
    process.execPath,
    [...GSLBD_NODE_FLAGS, join(BENCH_DIST, 'fixedResponder.js'), String(port), reply.toString('hex')],
    {
      cpu: SERVER_CPU,
      logFile: join(dir, `responder-${port}.log`),
    },
  );
  const probe = queryPacket(7, 'probe.example.test', 'A');
  for (let i = 0; ; i++) {
    try {
      await exchange(port, probe, 200);
      return { port, proc };
    } catch (e) {
      if (i > 50) throw new Error(`fixed responder not answering: ${(e as Error).message}\n${proc.tail()}`);
    }
  }
}

/**
 * Before measuring: gslbd's wire answers must equal resolve() in-process (data and ECS scope) for
 * a sample of the client mix, and gdnsd (when it runs: `gdnsdPort`) must answer the same
 * addresses, so the rows compare servers giving the same answers. A wrong gslbd answer fails the
 * group; gdnsd differences are counted in a note (gdnsd's scopes are its own).
 */
async function checkAnswers(ctx: BenchContext, clients: readonly MixClient[], gslbdPort: number, gdnsdPort: number | undefined): Promise<void> {
  const { snapshot } = quickstartSnapshot();
  const resolveCtx = systemContext();
  const inProcess = (client: MixClient): { data: string; scope: number } => {
    const a = resolve({ name: 'www.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, snapshot, resolveCtx);
    return { data: a.answers.map((r) => `A ${presentData(r.type, r.data)}`).join(), scope: a.scope };
  };
  for (const [name, type] of STATIC_NAMES) {
    const ours = await exchange(gslbdPort, queryPacket(1, name, type));
    if (ours.rcode !== 'NOERROR') throw new Error(`${name} ${type}: gslbd answers ${describe(ours)}`);
    if (gdnsdPort === undefined) continue;
    const theirs = await exchange(gdnsdPort, queryPacket(1, name, type));
    // SOA serials differ by design (gslbd derives its own); compare the rest.
    const comparable = (a: WireAnswer): string => a.answers.map((x) => (x.startsWith('SOA ') ? 'SOA' : x)).join();
    if (comparable(ours) !== comparable(theirs)) throw new Error(`${name} ${type}: gslbd answers ${describe(ours)}, gdnsd ${describe(theirs)}`);
  }
  let dataDiffers = 0;
  let scopeDiffers = 0;
  for (const client of clients.slice(0, CHECKED_CLIENTS)) {
    const expected = inProcess(client);
    const packet = queryPacket(1, 'www.example.test', 'A', client);
    const ours = await exchange(gslbdPort, packet);
    // A tie between data centers is split by rotation, so its answer changes call by call.
    const tie = new Set([expected.data, inProcess(client).data, inProcess(client).data]).size > 1;
    if ((ours.answers.join() !== expected.data && !tie) || ours.scope !== expected.scope) {
      throw new Error(`gslbd answers ${describe(ours)} for ${JSON.stringify(client)}; resolve() answers ${expected.data} scope ${expected.scope}`);
    }
    if (gdnsdPort === undefined) continue;
    const theirs = await exchange(gdnsdPort, packet);
    if (ours.answers.join() !== theirs.answers.join()) dataDiffers++;
    if (ours.scope !== theirs.scope) scopeDiffers++;
  }
  if (gdnsdPort === undefined) return;
  ctx.note(
    `answer check on ${CHECKED_CLIENTS} ECS clients: gslbd's wire answers and scopes equal resolve(); gdnsd's answer differs for ${dataDiffers} ` +
      `and its ECS scope for ${scopeDiffers} (gdnsd merges networks per answered data center, gslbd per full ranking of the data centers)`,
  );
}

function describe(a: WireAnswer): string {
  return `${a.rcode} [${a.answers.join('; ')}] scope ${a.scope}`;
}

/**
 * resolve()'s share of the gslbd process's CPU over one run, two ways: the resolve histogram's
 * sum (wall time around each timed call, which also counts time the process was descheduled, so it
 * reads high on a busy core), scaled by the doors' timing sample ({@link TIMING_SAMPLE}: one call
 * in 16 is timed), over the process CPU time; and the calls (the timed ones times the sample)
 * times resolve()'s in-process CPU cost per call on the same questions (`inProcessUs`), over the
 * same CPU time.
 */
export async function resolveShare(
  gslbd: GslbdServer,
  before: { resolveSeconds: number; resolveCalls: number },
  cpuSeconds: number,
  r: DnsperfResult,
  inProcessUs: number,
): Promise<Record<string, number>> {
  const after = await gslbd.scrape();
  const inResolve = after.resolveSeconds - before.resolveSeconds;
  const timed = after.resolveCalls - before.resolveCalls;
  const calls = timed * TIMING_SAMPLE;
  // Every 16th call is timed, so `calls` is within one sample of the calls made.
  if (calls + TIMING_SAMPLE < r.completed) throw new Error(`gslbd timed ${timed} resolve() calls for ${r.completed} answered queries`);
  return {
    'resolve % of CPU (histogram)': (100 * inResolve * TIMING_SAMPLE) / cpuSeconds,
    'resolve % of CPU (in-process cost)': (100 * calls * inProcessUs) / 1e6 / cpuSeconds,
    'resolve µs/call (histogram)': (inResolve / timed) * 1e6,
  };
}

/**
 * Another record's row in the GSLB listener table, for groups that start gslbd on their own
 * configuration: dnsperf (UDP, `-B`) with A queries for `name` carrying ECS from `clients`, one
 * warm-up run, then `ctx.runs` timed runs of {@link RUN_SECONDS} s on CPU {@link LOAD_CPU}, each
 * recorded with the server CPU per query, lost queries and resolve()'s share of the process CPU
 * ({@link resolveShare}; the in-process cost from `snapshot`, built from the same configuration,
 * measured right after each run as the listener group's own row does, so both factors of the
 * share come from the same minute of a machine whose load drifts).
 */
export async function recordListenerRecordRuns(
  ctx: BenchContext,
  gslbd: GslbdServer,
  rowId: string,
  name: string,
  clients: readonly MixClient[],
  snapshot: Snapshot,
): Promise<void> {
  const dir = ctx.tempDir(`listener-${rowId}`);
  const queryFile = join(dir, 'ecs.bin');
  writeFileSync(queryFile, lengthPrefixed(clients.map((c, i) => queryPacket(i & 0xffff, name, 'A', c))));
  const queries = clients.map((client): Query => ({ name, type: TYPE_CODES.A, client, transport: 'udp' }));
  const dnsperf = (seconds: number): Promise<DnsperfResult> =>
    runDnsperf(ctx.processes, { server: '127.0.0.1', port: gslbd.dnsPort, queryFile, binary: true, edns: false, seconds, cpu: LOAD_CPU }, dir, ctx.signal);
  await dnsperf(WARMUP_SECONDS);
  for (let run = 1; run <= ctx.runs; run++) {
    const before = { cpu: processCpuSeconds(gslbd.process.pid), metrics: await gslbd.scrape() };
    const r = await dnsperf(RUN_SECONDS);
    const cpu = processCpuSeconds(gslbd.process.pid) - before.cpu;
    const details: Record<string, number> = {
      'server CPU µs/query': (cpu / r.completed) * 1e6,
      'lost %': (100 * r.lost) / (r.completed + r.lost),
      ...(await resolveShare(gslbd, before.metrics, cpu, r, resolveCpuPerCall(queries, snapshot))),
    };
    ctx.record(LISTENER_GSLB_TABLE, rowId, r.queriesPerSecond, details);
    ctx.log(
      `run ${run} ${name} through the listener: ${Math.round(r.queriesPerSecond)} q/s, resolve ${details['resolve % of CPU (in-process cost)']!.toFixed(1)} % of CPU`,
    );
  }
}

/**
 * CPU µs per resolve() call on the given questions and snapshot (0.5 s after a warm-up), as this
 * thread's CPU time ({@link threadCpuSeconds}): the benchmark process holds several large
 * snapshots, and its GC helper threads marking them must not be billed to resolve().
 */
export function resolveCpuPerCall(queries: readonly Query[], snapshot: Snapshot = quickstartSnapshot().snapshot): number {
  const resolveCtx = systemContext();
  let sink = 0;
  for (let i = 0; i < 50_000; i++) sink += resolve(queries[i % queries.length]!, snapshot, resolveCtx).answers.length;
  const cpu0 = threadCpuSeconds();
  const t0 = performance.now();
  let calls = 0;
  while (performance.now() - t0 < 500) {
    for (let i = 0; i < 1000; i++) sink += resolve(queries[(calls + i) % queries.length]!, snapshot, resolveCtx).answers.length;
    calls += 1000;
  }
  const cpu = threadCpuSeconds() - cpu0;
  if (sink === 0) throw new Error('resolve() answered nothing');
  return (cpu * 1e6) / calls;
}
