import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import dnsPacket from 'dns-packet';
import { parse, stringify } from 'yaml';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { compiledCityGeo } from './harness/compiledCityGeo.js';
import { queryPacket } from './harness/dnsWire.js';
import { GSLBD_NODE_FLAGS } from './harness/gslbdServer.js';
import { BENCH_DIST, GSLBD_BUNDLE, GSLBD_CLI, QUICKSTART_CONFIG } from './harness/paths.js';
import { parseIp } from '../../src/core/net/ipAddress.js';
import { freePort } from '../support/freePort.js';

/**
 * Start-up time (issue 26, item 1): from the exec of a server process to its first answer over
 * UDP on loopback, against a bare Node UDP responder (the runtime's own floor: Node starting and
 * binding a socket). The gslbd rows run the bundle (`dist/bundle/cli/gslbd.js`, what the package's
 * `gslbd` command runs) but one, the unbundled `dist/src/cli/main.js` on the same quickstart.
 * test/bench/README.md, "startup".
 */

const TABLE = 'startup';
/** The target for a restart with city-level data. */
const TARGET_MS = 1000;
/** Records of the large configuration. */
const LARGE_RECORDS = 20_000;
/** A query is sent again this often until the first answer (ms): the resolution of the measure. */
const RESEND_MS = 2;
/** A start slower than this fails the row (the sources row parses the city data: up to ~30 s). */
const START_TIMEOUT_MS = 120_000;

const ROWS = [
  { id: 'node-responder', label: 'Node UDP responder (runtime floor)' },
  { id: 'gslbd-quickstart-compiled', label: 'gslbd, quickstart as shipped (compiled cache up to date)' },
  { id: 'gslbd-quickstart-unbundled', label: 'gslbd unbundled (dist/src), quickstart as shipped (compiled cache up to date)' },
  { id: 'gslbd-large-compiled', label: `gslbd, ${LARGE_RECORDS.toLocaleString('en')} GSLB records, compiled city data` },
  { id: 'gslbd-quickstart-sources', label: 'gslbd, quickstart without the compiled cache (sources parsed)' },
] as const;
type RowId = (typeof ROWS)[number]['id'];

const group: BenchGroup = {
  name: 'startup',
  description:
    'exec → first UDP answer: gslbd on the quickstart (with and without its compiled cache) and on 20,000 GSLB records, against a bare Node responder',
  onDemand: true,
  tables: [{ id: TABLE, title: 'Start-up: exec → first answer (UDP, loopback; server on CPU 0)', measure: 'starts/s', baseline: 'node-responder', rows: ROWS }],
  // Set-up: one parse of the city data for the cache (5–30 s). Per run: the sources row parses it
  // again (5–30 s), the 20,000-record row builds its snapshot (tens of seconds; 79 s to `gslbd up`
  // once on a machine at load 36), the others take about a second each.
  estimateSeconds: (runs) => 60 + runs * 90,
  async run(ctx) {
    const dir = ctx.tempDir('startup');
    const port = await freePort();
    const configs = writeConfigs(dir, port);
    ctx.log('building the quickstart compiled cache (gslbd geo build -c)');
    execFileSync(process.execPath, [GSLBD_CLI, 'geo', 'build', '-c', configs['gslbd-quickstart-compiled']], { stdio: 'ignore' });
    const www = queryPacket(1, 'www.example.test', 'A', { address: parseIp('193.0.14.0'), sourcePrefix: 24, fromEcs: true });
    const large = queryPacket(1, `r${LARGE_RECORDS - 1}.example.test`, 'A', { address: parseIp('193.0.14.0'), sourcePrefix: 24, fromEcs: true });
    const worst = new Map<RowId, number>();
    for (let run = 1; run <= ctx.runs; run++) {
      for (const row of ROWS) {
        if (!ctx.wants(TABLE, row.id)) continue;
        const args =
          row.id === 'node-responder'
            ? [join(BENCH_DIST, 'fixedResponder.js'), String(port), fixedReply(www).toString('hex')]
            : row.id === 'gslbd-quickstart-unbundled'
              ? [GSLBD_CLI, 'serve', configs['gslbd-quickstart-compiled']]
              : [GSLBD_BUNDLE, 'serve', configs[row.id]];
        const load = loadavg()[0]!;
        const { ms, cpuMs } = await timeToFirstAnswer(ctx, row.id, [...GSLBD_NODE_FLAGS, ...args], port, row.id === 'gslbd-large-compiled' ? large : www, dir);
        worst.set(row.id, Math.max(worst.get(row.id) ?? 0, ms));
        ctx.record(TABLE, row.id, 1000 / ms, { 'exec → first answer ms': ms, 'CPU ms to first answer': cpuMs, 'load average (1 min)': load });
      }
    }
    for (const row of ['gslbd-quickstart-compiled', 'gslbd-large-compiled'] as const) {
      const ms = worst.get(row);
      if (ms !== undefined) ctx.note(`${row}: slowest start ${Math.round(ms)} ms, target ≤ ${TARGET_MS} ms: ${ms <= TARGET_MS ? 'met' : 'NOT met'}`);
    }
    ctx.note(
      `starts/s = 1000 / (ms from exec to the first answer); the query is sent every ${RESEND_MS} ms from exec on. Every answer is checked (NOERROR with an A record).`,
    );
    ctx.note(
      'CPU ms to first answer: user + system time of the server process, every thread, read from /proc/PID/stat when the first answer arrives (10 ms ticks): what the start costs whatever the load; the wall time grows with the load average beside it.',
    );
  },
};
export default group;

/**
 * The configurations, on `port` (127.0.0.1 only, no admin listener): the quickstart as shipped
 * (its cache in `dir`), the same without `geo.compiled`, and {@link LARGE_RECORDS} GSLB records
 * over 20 services on the compiled city data (what a production configuration loads).
 */
function writeConfigs(dir: string, port: number): Record<Exclude<RowId, 'node-responder' | 'gslbd-quickstart-unbundled'>, string> {
  const quickstart = parse(readFileSync(QUICKSTART_CONFIG, 'utf8')) as Record<string, unknown> & { geo: Record<string, unknown> };
  const base = { ...quickstart, listeners: { dns: [{ address: '127.0.0.1', port }] }, logging: { level: 'warn' } };
  const files = {
    'gslbd-quickstart-compiled': join(dir, 'quickstart.yaml'),
    'gslbd-quickstart-sources': join(dir, 'sources.yaml'),
    'gslbd-large-compiled': join(dir, 'large.yaml'),
  };
  writeFileSync(files['gslbd-quickstart-compiled'], stringify(base));
  const sourcesOnly = { ...quickstart.geo };
  delete sourcesOnly.compiled;
  writeFileSync(files['gslbd-quickstart-sources'], stringify({ ...base, geo: sourcesOnly }));
  const dcs = ['us-east', 'eu-west', 'ap-northeast'];
  const services = Array.from({ length: 20 }, (_, s) => ({
    name: `s${s}`,
    endpoints: dcs.map((dc, d) => ({ dc, address: `10.${s}.${d}.1` })),
  }));
  const records = Array.from({ length: LARGE_RECORDS }, (_, i) => ({
    name: `r${i}.example.test`,
    type: 'A',
    ttl: 30,
    service: `s${i % services.length}`,
    policy: { type: 'static-proximity', pickDcCount: 1, balanceAlgorithm: 'round-robin', default: [dcs[i % dcs.length]] },
    failsafe: [`10.${i % services.length}.0.1`],
  }));
  writeFileSync(files['gslbd-large-compiled'], stringify({ ...base, geo: compiledCityGeo(), services, records }));
  return files;
}

/** A reply to `query` for the fixed responder: the query's own bytes with QR set (only the ID is copied in). */
function fixedReply(query: Buffer): Buffer {
  const reply = Buffer.from(query);
  reply[2] = reply[2]! | 0x80;
  return reply;
}

/** What one start took: wall time from the exec to the first answer, and the server's CPU time until then. */
interface StartCost {
  readonly ms: number;
  readonly cpuMs: number;
}

/** User + system CPU time of process `pid`, every thread (ms; /proc/PID/stat counts 10 ms ticks). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Starts `node args` on CPU 0 and sends `query` to `port` every {@link RESEND_MS} ms from just
 * before the exec until an answer arrives; stops the process.
 * @returns milliseconds from the exec to the first answer, and the server's CPU time until then.
 * @throws Error when the process exits, the answer is not a NOERROR with an A record (the fixed
 * responder's echo excepted), or no answer comes within {@link START_TIMEOUT_MS}.
 */
async function timeToFirstAnswer(ctx: BenchContext, name: string, args: string[], port: number, query: Buffer, dir: string): Promise<StartCost> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const started = performance.now();
  const proc = ctx.processes.start(name, process.execPath, args, { cpu: 0, logFile: join(dir, `${name}.log`) });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<StartCost>((resolve, reject) => {
      socket.on('message', (msg) => {
        const ms = performance.now() - started;
        const cpuMs = processCpuMs(proc.pid);
        const p = dnsPacket.decode(msg);
        const ok = name === 'node-responder' || ((p as { rcode?: string }).rcode === 'NOERROR' && (p.answers ?? []).some((a) => a.type === 'A'));
        if (ok) resolve({ ms, cpuMs });
        else reject(new Error(`${name}: unexpected first answer ${JSON.stringify(p.answers)}`));
      });
      timer = setInterval(() => {
        if (performance.now() - started > START_TIMEOUT_MS) reject(new Error(`${name}: no answer ${START_TIMEOUT_MS} ms after exec:\n${proc.tail()}`));
        else if (ctx.signal.aborted) reject(ctx.signal.reason as Error);
        else socket.send(query, port, '127.0.0.1');
      }, RESEND_MS);
      void proc.exited.then((code) => reject(new Error(`${name} exited (${code}) before answering:\n${proc.tail()}`)));
    });
  } finally {
    clearInterval(timer);
    socket.close();
    await ctx.processes.stop(proc);
  }
}
