import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix } from './harness/clientMix.js';
import { lengthPrefixed, queryPacket } from './harness/dnsWire.js';
import { runDnsperf } from './harness/dnsperf.js';
import { startGdnsd } from './harness/gdnsdServer.js';
import { GSLBD_NODE_FLAGS, startGslbd } from './harness/gslbdServer.js';
import { QUICKSTART_CONFIG } from './harness/paths.js';
import { processCpuSeconds } from './harness/processCpu.js';
import type { BenchProcess } from './harness/processes.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';
import { randomLetterCase } from '../support/dnsClient.js';
import { seededRandom } from '../support/seededRandom.js';

const SERVER_CPU = 0;
const LOAD_CPU = 1;
const RUN_SECONDS = 3;
const WARMUP_SECONDS = 1;
/** The ECS client mix of the differential test (src/doors/dns/fastPath.test.ts). */
const CLIENTS = 3_000;
/**
 * Letter-case variants per client in the 0x20 row's query file (96,000 queries, ~6 MB): a run
 * replays the file about once, so most of its queries ask a case the warm-up never sent.
 */
const CASE_VARIANTS = 32;

const TABLE = 'fastpath-gslb';
/** The scaling table: nothing pinned, 1 against 2 native threads (issue 22: "with two threads on the two cores, report the scaling"). */
const SCALING_TABLE = 'fastpath-two-cores';
/**
 * dnsperf sockets in the scaling table: SO_REUSEPORT spreads datagrams over the server's sockets by
 * their 4-tuple hash, so one dnsperf socket would reach one thread only.
 */
const SCALING_CLIENTS = 8;
const ROW = {
  gdnsd: 'fastpath-gdnsd',
  node: 'fastpath-node-listener',
  fast: 'fastpath-native',
  cased: 'fastpath-native-0x20',
  rotating: 'fastpath-native-rotating',
} as const;
type ServerName = keyof typeof ROW;
const SCALING_ROW = {
  fast1: 'fastpath-native-1-thread',
  fast2: 'fastpath-native-2-threads',
  gdnsd2: 'fastpath-gdnsd-2-threads',
} as const;
type ScalingName = keyof typeof SCALING_ROW;
/**
 * Two endpoints in each data center, so that round-robin has a choice: with one endpoint per data
 * center (the quickstart's `web`) round-robin always picks the same one, the engine marks the answer
 * replayable, and the fast path serves it from templates — the rotating row then measured template
 * hits (148k q/s at 6.19 µs at 57e7315, the same as the template row).
 */
const ROTATING_SERVICE = {
  name: 'web-pool',
  endpoints: [
    { dc: 'us-east', address: '192.0.2.11' },
    { dc: 'us-east', address: '192.0.2.12' },
    { dc: 'eu-west', address: '198.51.100.11' },
    { dc: 'eu-west', address: '198.51.100.12' },
    { dc: 'ap-northeast', address: '203.0.113.11' },
    { dc: 'ap-northeast', address: '203.0.113.12' },
  ],
};
/** A record whose answers rotate (round-robin over two endpoints in the nearest data center): never replayed, so the fast path hands every query to JavaScript. */
const ROTATING_RECORD = {
  name: 'rr.example.test',
  type: 'A',
  ttl: 30,
  service: ROTATING_SERVICE.name,
  policy: { type: 'static-proximity', pickDcCount: 1, balanceAlgorithm: 'round-robin', default: ['us-east'] },
};

/**
 * The standalone listener's native fast path (`dns.fastPath`, src/doors/dns/README.md) against
 * gdnsd (the real one, geoip plugin with nets from gslbd's own decisions, as in the `listener`
 * group) and against the Node listener, on the quickstart configuration: www A with ECS from
 * the 3,000-client mix, every server pinned to CPU 0 (the fast path with one thread), dnsperf on
 * CPU 1, runs interleaved. Queries/s, with the server's CPU per query beside it (the primary
 * criterion: gdnsd saturates dnsperf before itself). The first pass over the mix fills the fast
 * path's templates (warm-up); the measured runs replay them. The `rotating` row asks the same fast
 * path (same process) for a rotating record with the same clients: every answer is JavaScript's
 * (rotation is not done natively, README "Fast path"), so the two rows show what that costs. Each
 * fast-path row reports the share of its queries the threads answered natively (the listener's
 * hit and miss counters in `/metrics`), so a row that does not measure what it names shows it.
 * The `0x20` row asks the same fast path with the same clients, each in {@link CASE_VARIANTS}
 * random letter cases of `www.example.test` (seeded), as DNS 0x20 resolvers do; its warm-up sends
 * the lower-case file, so its share answered natively shows whether a template installed by one
 * case serves the others (README "Fast path", "Letter case").
 */
const group: BenchGroup = {
  name: 'fastpath',
  description: 'native UDP fast path vs gdnsd and vs the Node listener: queries/s and server CPU per query, GSLB www A with the ECS client mix',
  onDemand: true,
  tables: [
    {
      id: TABLE,
      title: `standalone listener fast path, www A with ECS from ${CLIENTS} clients (dnsperf -B, ${RUN_SECONDS} s runs; servers CPU ${SERVER_CPU}, dnsperf CPU ${LOAD_CPU})`,
      measure: 'queries/s',
      baseline: ROW.gdnsd,
      rows: [
        { id: ROW.gdnsd, label: 'gdnsd 3.8 geoip plugin, nets from the same decisions' },
        { id: ROW.node, label: 'gslbd, Node listener' },
        { id: ROW.fast, label: 'gslbd, native fast path (1 thread)' },
        { id: ROW.cased, label: `gslbd, native fast path (1 thread), names in random letter case (DNS 0x20, ${CASE_VARIANTS} per client)` },
        { id: ROW.rotating, label: 'gslbd, native fast path (1 thread), rotating record (answered by JavaScript)' },
      ],
    },
    {
      id: SCALING_TABLE,
      title: `two cores, nothing pinned: the fast path with 1 and 2 threads (dnsperf -B -c ${SCALING_CLIENTS}, ${RUN_SECONDS} s runs, sharing the cores with the server)`,
      measure: 'queries/s',
      baseline: SCALING_ROW.fast1,
      rows: [
        { id: SCALING_ROW.fast1, label: 'gslbd, native fast path, 1 thread' },
        { id: SCALING_ROW.fast2, label: 'gslbd, native fast path, 2 threads' },
        { id: SCALING_ROW.gdnsd2, label: 'gdnsd 3.8, 2 UDP threads' },
      ],
    },
  ],
  estimateSeconds: (runs) => 35 + 8 * (WARMUP_SECONDS + 0.7) + runs * 8 * (RUN_SECONDS + 0.7),
  async run(ctx) {
    const dir = ctx.tempDir('fastpath');
    const quickstart = (): Record<string, unknown> => parse(readFileSync(QUICKSTART_CONFIG, 'utf8')) as Record<string, unknown>;
    const base = quickstart();
    const fastConfig = {
      ...base,
      services: [...(base.services as unknown[]), ROTATING_SERVICE],
      records: [...(base.records as unknown[]), ROTATING_RECORD],
      dns: { fastPath: { enabled: true, threads: 1 } },
    };
    const nodeStarting = startGslbd(
      ctx.processes,
      { cpu: SERVER_CPU, dir: ctx.tempDir('gslbd-node'), nodeArgs: GSLBD_NODE_FLAGS, config: quickstart() },
      ctx.signal,
    );
    nodeStarting.catch(() => undefined);
    const fastStarting = startGslbd(
      ctx.processes,
      { cpu: SERVER_CPU, dir: ctx.tempDir('gslbd-fast'), nodeArgs: GSLBD_NODE_FLAGS, config: fastConfig },
      ctx.signal,
    );
    fastStarting.catch(() => undefined);
    const scaling = (Object.keys(SCALING_ROW) as ScalingName[]).filter((s) => ctx.wants(SCALING_TABLE, SCALING_ROW[s]));
    const fast2Starting = scaling.includes('fast2')
      ? startGslbd(
          ctx.processes,
          {
            cpu: undefined,
            dir: ctx.tempDir('gslbd-fast2'),
            nodeArgs: GSLBD_NODE_FLAGS,
            config: { ...fastConfig, dns: { fastPath: { enabled: true, threads: 2 } } },
          },
          ctx.signal,
        )
      : undefined;
    fast2Starting?.catch(() => undefined);
    const { snapshot, geo } = quickstartSnapshot();
    const clients = clientMix(geo, CLIENTS, 3);
    const queryFile = join(dir, 'gslb-ecs.bin');
    writeFileSync(queryFile, lengthPrefixed(clients.map((c, i) => queryPacket(i & 0xffff, 'www.example.test', 'A', c))));
    const random = seededRandom(20261202);
    const casedFile = join(dir, 'gslb-ecs-0x20.bin');
    const cased: Buffer[] = [];
    for (let v = 0; v < CASE_VARIANTS; v++)
      for (const c of clients) cased.push(queryPacket(cased.length & 0xffff, randomLetterCase('www.example.test', random), 'A', c));
    writeFileSync(casedFile, lengthPrefixed(cased));
    const rotatingFile = join(dir, 'rr-ecs.bin');
    writeFileSync(rotatingFile, lengthPrefixed(clients.map((c, i) => queryPacket(i & 0xffff, 'rr.example.test', 'A', c))));
    ctx.log('starting gdnsd with nets from the quickstart decisions');
    const gdnsd = await startGdnsd(ctx.processes, snapshot, geo, ctx.tempDir('gdnsd'), SERVER_CPU, ctx.signal);
    const gdnsd2 = scaling.includes('gdnsd2') ? await startGdnsd(ctx.processes, snapshot, geo, ctx.tempDir('gdnsd2'), undefined, ctx.signal, 2) : undefined;
    const [node, fast, fast2] = [await nodeStarting, await fastStarting, await fast2Starting];
    const servers: Record<ServerName, { port: number; proc: BenchProcess }> = {
      gdnsd: { port: gdnsd.port, proc: gdnsd.process },
      node: { port: node.dnsPort, proc: node.process },
      fast: { port: fast.dnsPort, proc: fast.process },
      cased: { port: fast.dnsPort, proc: fast.process },
      rotating: { port: fast.dnsPort, proc: fast.process },
    };
    const plan = (Object.keys(ROW) as ServerName[]).filter((s) => ctx.wants(TABLE, ROW[s]));
    const dnsperf = (server: ServerName, seconds: number, warmUp = false) =>
      runDnsperf(
        ctx.processes,
        {
          server: '127.0.0.1',
          port: servers[server].port,
          queryFile: server === 'rotating' ? rotatingFile : server === 'cased' && !warmUp ? casedFile : queryFile,
          binary: true,
          edns: false,
          seconds,
          cpu: LOAD_CPU,
        },
        dir,
        ctx.signal,
      );
    ctx.log('warm-up runs (the fast path keeps its templates)');
    for (const server of plan) await dnsperf(server, WARMUP_SECONDS, true);
    for (let run = 1; run <= ctx.runs; run++) {
      for (const server of plan) {
        const proc = servers[server].proc;
        const native = server === 'fast' || server === 'cased' || server === 'rotating';
        const outcomesBefore = native ? await fastPathOutcomes(fast.adminPort) : undefined;
        const before = processCpuSeconds(proc.pid);
        const r = await dnsperf(server, RUN_SECONDS);
        const cpu = processCpuSeconds(proc.pid) - before;
        const details: Record<string, number> = { 'server CPU µs/query': (cpu / r.completed) * 1e6, 'lost %': (100 * r.lost) / (r.completed + r.lost) };
        if (outcomesBefore) {
          const after = await fastPathOutcomes(fast.adminPort);
          const hits = after.hit - outcomesBefore.hit;
          details['answered natively %'] = (100 * hits) / Math.max(1, hits + after.miss - outcomesBefore.miss);
        }
        ctx.record(TABLE, ROW[server], r.queriesPerSecond, details);
        const nativeShare = outcomesBefore ? `, ${details['answered natively %']!.toFixed(1)} % answered natively` : '';
        ctx.log(
          `run ${run} ${server}: ${Math.round(r.queriesPerSecond)} q/s, ${details['server CPU µs/query']!.toFixed(1)} µs CPU/query, lost ${r.lost}${nativeShare}`,
        );
      }
    }
    if (scaling.length > 0) await scalingRuns(ctx, scaling, dir, queryFile, { fast1: fast, fast2, gdnsd2 });
    ctx.note(
      `${CLIENTS} www A queries with ECS from the client mix; the fast path answers from templates the first pass installed. ` +
        `The 0x20 row: the same clients, ${CASE_VARIANTS} random letter cases of www.example.test each (seed 20261202), after a warm-up in lower case. ` +
        `The rotating row: the same clients asking rr.example.test (round-robin over the two endpoints of the nearest data center) of the same fast-path process, answered by JavaScript. ` +
        `Byte-identical answers are checked by src/doors/dns/fastPath.test.ts, not here. ` +
        `Two cores: the 1-thread fast path is the first table's process, unpinned for these runs (its affinity widened with taskset); dnsperf runs ${SCALING_CLIENTS} sockets on the same two cores, so a server thread and dnsperf share them.`,
    );
  },
};

/** A server of the scaling table: its DNS port and process. */
interface ScalingServer {
  readonly process: BenchProcess;
  readonly port?: number;
  readonly dnsPort?: number;
}

/**
 * The scaling table's runs: each server unpinned (the 1-thread fast path is the first table's
 * process, its affinity widened to both CPUs first), dnsperf with {@link SCALING_CLIENTS} sockets
 * unpinned, a warm-up then `ctx.runs` interleaved runs; queries/s with the server's CPU per query.
 */
async function scalingRuns(
  ctx: BenchContext,
  plan: readonly ScalingName[],
  dir: string,
  queryFile: string,
  servers: Record<ScalingName, ScalingServer | undefined>,
): Promise<void> {
  const fast1 = servers.fast1!.process;
  // taskset -a: every thread of the process, the native serving threads included.
  await ctx.processes.runToEnd(
    'taskset',
    'taskset',
    ['-a', '-p', '-c', '0,1', String(fast1.pid)],
    { cpu: undefined, logFile: join(dir, 'taskset.log') },
    ctx.signal,
  );
  const dnsperf = (server: ScalingName, seconds: number) => {
    const s = servers[server]!;
    return runDnsperf(
      ctx.processes,
      { server: '127.0.0.1', port: s.dnsPort ?? s.port!, queryFile, binary: true, edns: false, seconds, cpu: undefined, clients: SCALING_CLIENTS },
      dir,
      ctx.signal,
    );
  };
  for (const server of plan) await dnsperf(server, WARMUP_SECONDS);
  for (let run = 1; run <= ctx.runs; run++) {
    for (const server of plan) {
      const proc = servers[server]!.process;
      const before = processCpuSeconds(proc.pid);
      const r = await dnsperf(server, RUN_SECONDS);
      const cpu = processCpuSeconds(proc.pid) - before;
      const details = { 'server CPU µs/query': (cpu / r.completed) * 1e6, 'lost %': (100 * r.lost) / (r.completed + r.lost) };
      ctx.record(SCALING_TABLE, SCALING_ROW[server], r.queriesPerSecond, details);
      ctx.log(
        `run ${run} ${server} (two cores): ${Math.round(r.queriesPerSecond)} q/s, ${details['server CPU µs/query'].toFixed(1)} µs CPU/query, lost ${r.lost}`,
      );
    }
  }
}

/**
 * The fast path's datagram counters by outcome (`gslbd_dns_fastpath_datagrams_total`, `hit`: answered
 * by the native threads, `miss`: by JavaScript) from the admin listener's `/metrics`.
 * @throws Error when the scrape fails or lacks either series.
 */
async function fastPathOutcomes(adminPort: number): Promise<{ hit: number; miss: number }> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const value = (outcome: string): number => {
    const m = new RegExp(`^gslbd_dns_fastpath_datagrams_total\\{outcome="${outcome}"\\} ([0-9.e+]+)$`, 'm').exec(text);
    if (!m) throw new Error(`/metrics has no fast-path ${outcome} counter`);
    return Number(m[1]);
  };
  return { hit: value('hit'), miss: value('miss') };
}

export default group;
