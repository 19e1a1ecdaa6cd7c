import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { replayRows } from '../../src/admin/replayRows.js';
import { summariseReplay } from '../../src/cli/whatIfReplay.js';
import { readQueryLog } from '../../src/cli/queryLogScan.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import type { Query } from '../../src/core/model/query.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { allUpHealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { loadConfigFile } from '../../src/process/loadConfig.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix } from './harness/clientMix.js';
import { startGslbd } from './harness/gslbdServer.js';
import { QUICKSTART_CONFIG } from './harness/paths.js';
import { processCpuSeconds } from './harness/processCpu.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';

/**
 * Issue 25's two targets: `gslbd simulate` replays ≥ 200,000 queries/s from a query log, and the
 * console's live updates cost ≤ 1 % of a core with 10 subscribed clients (Node clients, not
 * browsers). test/bench/README.md, "console".
 */

const REPLAY = 'whatif-replay';
const LIVE = 'console-live';
/** Query-log lines replayed per run, and the client networks they are drawn from (most lines from a few: {@link skewedLog}). */
const LOG_LINES = 1_000_000;
const DISTINCT = 50_000;
/** Subscribers of the console's event stream, and how long their cost is measured (s). */
const SUBSCRIBERS = 10;
const WINDOW_S = 20;

const group: BenchGroup = {
  name: 'console',
  description: 'what-if replay of a 1,000,000-line query log (simulate) against resolve() alone; engine CPU with 10 console subscribers against none',
  onDemand: true,
  tables: [
    {
      id: REPLAY,
      title: 'What-if replay of the quickstart (www, ECS client mix), in-process',
      measure: 'queries/s',
      baseline: 'resolve',
      rows: [
        { id: 'resolve', label: 'resolve(), one snapshot, the distinct queries' },
        { id: 'replay-distinct', label: 'replayRows: the distinct queries on two snapshots' },
        { id: 'simulate-log', label: `simulate: ${LOG_LINES.toLocaleString('en')} log lines read, replayed, summarised` },
      ],
    },
    {
      id: LIVE,
      title: `Console live updates: engine CPU over ${WINDOW_S} s (quickstart, no DNS traffic)`,
      measure: '% of a core free',
      baseline: 'idle',
      rows: [
        { id: 'idle', label: 'engine, no subscriber' },
        { id: 'subscribers', label: `engine, ${SUBSCRIBERS} Node clients on /console/events` },
      ],
    },
  ],
  estimateSeconds: (runs) => 40 + runs * (2 * WINDOW_S + 15),
  async run(ctx) {
    replay(ctx);
    await live(ctx);
  },
};
export default group;

function replay(ctx: BenchContext): void {
  const { snapshot, geo } = quickstartSnapshot();
  const { config } = loadConfigFile(QUICKSTART_CONFIG);
  // The candidate: the same file compiled again (nothing moves), so both sides do full decisions.
  const candidate = buildSnapshot(
    QUICKSTART_CONFIG,
    config,
    { geo: snapshot.env.geo, health: allUpHealthView, metrics: emptyMetricView },
    Date.now(),
    snapshot,
  );
  const clients = clientMix(geo, DISTINCT, 2512);
  const text = skewedLog(clients.map((c) => `${formatIp(c.address)}/${c.sourcePrefix}`));
  const distinct = readQueryLog(text).queries;
  for (let run = 1; run <= ctx.runs; run++) {
    const queries: Query[] = clients.map((c) => ({ name: 'www.example.test', type: 1, client: c, transport: 'udp', dnssecOk: false }));
    const resolveCtx = systemContext();
    let t0 = performance.now();
    for (const q of queries) resolve(q, snapshot, resolveCtx);
    ctx.record(REPLAY, 'resolve', queries.length / ((performance.now() - t0) / 1000));
    t0 = performance.now();
    replayRows(snapshot, candidate, systemContext(), distinct);
    ctx.record(REPLAY, 'replay-distinct', distinct.length / ((performance.now() - t0) / 1000));
    t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const log = readQueryLog(text).queries;
    const readSeconds = (performance.now() - t0) / 1000;
    const summary = summariseReplay(log, replayRows(snapshot, candidate, systemContext(), log));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    if (summary.queries !== LOG_LINES || summary.movedQueries !== 0)
      throw new Error(`replay summary: ${summary.queries} queries, ${summary.movedQueries} moved`);
    ctx.record(REPLAY, 'simulate-log', LOG_LINES / seconds, {
      'distinct replayed': log.length,
      'read s': readSeconds,
      'lines per CPU s': LOG_LINES / cpuSeconds,
    });
  }
  ctx.note(
    `whatif-replay: ${LOG_LINES.toLocaleString('en')} log lines (${(text.length / 1e6).toFixed(0)} MB), ${distinct.length.toLocaleString('en')} distinct (name, type, client network); target ≥ 200,000 queries/s`,
  );
}

/**
 * A query log as the DNS front door writes it (every field of `src/doors/dns/handleMessage.ts`'s
 * line) over `networks`, skewed as resolver traffic is: line i's network is drawn as
 * `networks[⌊n·u³⌋]` (u uniform, fixed seed), so the busiest tenth of the networks sends about
 * half the lines and most networks a few; 1 line in 10 is an AAAA query, 1 in 50 another log
 * line of the engine.
 */
function skewedLog(networks: readonly string[]): Buffer {
  let seed = 20261202;
  const uniform = (): number => {
    // mulberry32: a fixed sequence, so every run replays the same log.
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const lines: string[] = [];
  for (let i = 0; i < LOG_LINES; i++) {
    if (i % 50 === 49) lines.push(JSON.stringify({ level: 30, time: 1764650000000 + i, pid: 1, hostname: 'bench', msg: 'health transition' }));
    const client = networks[Math.floor(networks.length * uniform() ** 3)]!;
    const qtype = i % 10 === 9 ? 'AAAA' : 'A';
    lines.push(
      JSON.stringify({
        level: 30,
        time: 1764650000000 + i,
        pid: 1,
        hostname: 'bench',
        component: 'query-log',
        qname: 'www.example.test',
        qtype,
        transport: 'udp',
        client,
        resolver: '192.0.2.0/24',
        ecs: true,
        rcode: 'NOERROR',
        scope: 24,
        answers: 1,
        dcs: ['us-east'],
        msg: 'query',
      }),
    );
  }
  return Buffer.from(lines.join('\n'), 'utf8');
}

async function live(ctx: BenchContext): Promise<void> {
  const server = await startGslbd(ctx.processes, { cpu: 1, dir: ctx.tempDir('console-live') }, ctx.signal);
  const pid = server.process.pid;
  const cpuOver = async (seconds: number): Promise<number> => {
    const before = processCpuSeconds(pid);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    return processCpuSeconds(pid) - before;
  };
  // Warm-up: one subscriber for a few updates, so V8 has compiled the feed before any window.
  const warm = await subscribe(server.adminPort);
  await new Promise((r) => setTimeout(r, 6000));
  warm.close();
  await new Promise((r) => setTimeout(r, 1000));
  for (let run = 1; run <= ctx.runs; run++) {
    const idle = await cpuOver(WINDOW_S);
    ctx.record(LIVE, 'idle', 100 - (100 * idle) / WINDOW_S, { 'CPU % of a core': (100 * idle) / WINDOW_S });
    const streams = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => subscribe(server.adminPort)));
    await new Promise((r) => setTimeout(r, 3000));
    const received = streams.reduce((n, s) => n + s.events(), 0);
    const busy = await cpuOver(WINDOW_S);
    const updates = streams.reduce((n, s) => n + s.events(), 0) - received;
    for (const s of streams) s.close();
    const percent = (100 * busy) / WINDOW_S;
    ctx.record(LIVE, 'subscribers', 100 - percent, { 'CPU % of a core': percent, 'updates received': updates });
  }
  ctx.note(`console-live: target ≤ 1 % of a core for ${SUBSCRIBERS} subscribers (compare the rows' CPU % details: the difference is the console's cost)`);
}

/** One Node client on the console's event stream: counts `state` events until closed. */
function subscribe(port: number): Promise<{ events(): number; close(): void }> {
  return new Promise((resolvePromise, reject) => {
    let n = 0;
    const req = request({ host: '127.0.0.1', port, path: '/console/events', headers: { host: `127.0.0.1:${port}` } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`/console/events: ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (n += chunk.split('event: state').length - 1));
      resolvePromise({ events: () => n, close: () => req.destroy() });
    });
    // After close the stream's error is expected; before it, it fails the subscription (a settled promise ignores later calls).
    req.on('error', reject);
    req.end();
  });
}
