import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { presentData } from '../../src/core/dns/presentation.js';
import { EngineMetrics } from '../../src/core/telemetry/engineMetrics.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { Engine } from '../../src/pipeline/engine.js';
import { AnswerWrapper } from '../../src/doors/answerWrapper.js';
import { PowerDnsMetrics } from '../../src/doors/powerdns/metrics.js';
import { RemoteBackendSession } from '../../src/doors/powerdns/remoteBackend.js';
import { atOnce } from '../support/powerdnsFixture.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import { createLogger } from '../../src/core/telemetry/logger.js';
import { RateLimitedLog } from '../../src/core/telemetry/rateLimitedLog.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import type { BenchContext, BenchGroup } from './harness/benchGroup.js';
import { clientMix, type MixClient } from './harness/clientMix.js';
import { exchange, lengthPrefixed, queryPacket, type WireAnswer } from './harness/dnsWire.js';
import { runDnsperf } from './harness/dnsperf.js';
import { startGslbd, type GslbdServer } from './harness/gslbdServer.js';
import { measureInProcess } from './harness/inProcessRows.js';
import { geoipBackend, startPdns } from './harness/pdnsServer.js';
import { NoopSession } from './noopRemoteBackend.js';
import { json11Line } from '../support/json11.js';
import { BENCH_DIST } from './harness/paths.js';
import { processContextSwitches, processCpuSeconds } from './harness/processCpu.js';
import type { BenchProcess } from './harness/processes.js';
import { quickstartSnapshot } from './harness/quickstartSnapshot.js';

/** pdns_server and its backend process share CPU 0; dnsperf runs on CPU 1. */
const SERVER_CPU = 0;
const LOAD_CPU = 1;
const RUN_SECONDS = 2;
const WARMUP_SECONDS = 1;
const GSLB_CLIENTS = 10_000;
/**
 * Node flags of both Node backends: a young generation fixed at 16 MiB per semi-space, as
 * examples/powerdns/gslbd.service runs gslbd (why: src/doors/powerdns/README.md,
 * "Performance"). The do-nothing backend gets the same flags, so both run with equal settings.
 */
const BACKEND_NODE_FLAGS = ['--min-semi-space-size=16'];
const CHECKED_CLIENTS = 50;

type Backend = 'noop' | 'gslbd' | 'bind' | 'geoip';
type Caches = 'off' | 'default';
interface Instance {
  readonly backend: Backend;
  readonly caches: Caches;
  readonly threads: 3 | 6;
}
const key = (i: Instance): string => `${i.backend}-${i.caches}-dt${i.threads}`;

type Kind = 'static' | 'gslb';
interface Row {
  readonly table: string;
  readonly id: string;
  readonly label: string;
  readonly instance: Instance;
  readonly kind: Kind;
}

const T_STATIC = 'powerdns-static';
const T_GSLB = 'powerdns-gslb';
const T_GSLB_DT3 = 'powerdns-gslb-dt3';
const I = (backend: Backend, caches: Caches = 'off', threads: 3 | 6 = 6): Instance => ({ backend, caches, threads });
const ROWS: readonly Row[] = [
  { table: T_STATIC, id: 'pdns-noop', label: 'pdns + do-nothing Node backend (protocol ceiling)', instance: I('noop'), kind: 'static' },
  { table: T_STATIC, id: 'pdns-bind', label: 'pdns + bind backend, same zone (PowerDNS ceiling)', instance: I('bind'), kind: 'static' },
  { table: T_STATIC, id: 'pdns-gslbd', label: 'pdns + gslbd', instance: I('gslbd'), kind: 'static' },
  { table: T_GSLB, id: 'pdns-noop', label: 'pdns + do-nothing Node backend, fixed scoped answer (protocol ceiling)', instance: I('noop'), kind: 'gslb' },
  { table: T_GSLB, id: 'pdns-gslbd', label: 'pdns + gslbd, static proximity', instance: I('gslbd'), kind: 'gslb' },
  { table: T_GSLB, id: 'pdns-geoip', label: 'pdns + geoip backend, continent service (legacy GeoIP.dat)', instance: I('geoip'), kind: 'gslb' },
  { table: T_GSLB, id: 'pdns-gslbd-cached', label: 'pdns + gslbd, default caches', instance: I('gslbd', 'default'), kind: 'gslb' },
  { table: T_GSLB_DT3, id: 'pdns-noop', label: 'pdns + do-nothing Node backend (protocol ceiling)', instance: I('noop', 'off', 3), kind: 'gslb' },
  { table: T_GSLB_DT3, id: 'pdns-gslbd', label: 'pdns + gslbd, static proximity', instance: I('gslbd', 'off', 3), kind: 'gslb' },
];

const STATIC_QUERIES = ['ns1.example.test A', 'v6.example.test AAAA', 'example.test SOA'];

const T_HANDLER = 'powerdns-handler';
/** Seconds of timed in-process calls per handler row and run, and the CPU they are pinned to. */
const HANDLER_SECONDS = 2;
const HANDLER_CPU = '1';

/**
 * PowerDNS Authoritative 4.7 in front of different backends, under dnsperf on loopback: the
 * remote backend protocol's own ceiling (a Node backend that answers canned records), gslbd, and
 * PowerDNS's native bind and geoip backends; static names and the GSLB name with an ECS client
 * mix; caches off (the example configuration) and at PowerDNS's defaults; 6 and 3 distributor
 * threads (each one lock-step connection to the backend). pdns_server and its backend share CPU
 * 0, dnsperf runs on CPU 1; every pdns_server variant runs at once (idle unless measured), and
 * runs interleave the rows. Details: pdns and backend CPU per query, backend lookups per query and
 * CPU per lookup.
 */
const group: BenchGroup = {
  name: 'powerdns',
  description: 'pdns_server + gslbd (remote backend) vs a do-nothing remote backend, the bind and geoip backends; caches off/default, 3/6 threads',
  tables: [
    {
      id: T_STATIC,
      title: `PowerDNS 4.7, static names (dnsperf UDP ${RUN_SECONDS} s runs; pdns + backend CPU ${SERVER_CPU}, dnsperf CPU ${LOAD_CPU}; distributor-threads 6, caches off unless noted)`,
      measure: 'queries/s',
      baseline: 'pdns-noop',
      rows: ROWS.filter((r) => r.table === T_STATIC),
    },
    {
      id: T_GSLB,
      title: 'PowerDNS 4.7, GSLB name www A with the ECS client mix (dnsperf -B; distributor-threads 6, caches off unless noted)',
      measure: 'queries/s',
      baseline: 'pdns-noop',
      rows: ROWS.filter((r) => r.table === T_GSLB),
    },
    {
      id: T_HANDLER,
      title: `remote backend protocol handler in-process: the lookups of one GSLB query as PowerDNS sends them with caches off (zone SOA, www twice), 1 core (CPU ${HANDLER_CPU})`,
      measure: 'queries/s',
      baseline: 'noop-handler',
      rows: [
        { id: 'noop-handler', label: 'do-nothing handler: parse + canned reply (noopRemoteBackend.ts)' },
        { id: 'gslbd-handler', label: 'gslbd RemoteBackendSession.handle, ECS client mix' },
      ],
    },
    {
      id: T_GSLB_DT3,
      title: 'PowerDNS 4.7, GSLB name with the ECS client mix, distributor-threads 3 (PowerDNS default), caches off',
      measure: 'queries/s',
      baseline: 'pdns-noop',
      rows: ROWS.filter((r) => r.table === T_GSLB_DT3),
    },
  ],
  // Measured 115 s for 3 runs of 3 s at load 12: ~6 s to start gslbd (compiled location data), the
  // pdns_server variants and the client mix, ~0.3 s per run besides dnsperf's own seconds.
  estimateSeconds: (runs) => 10 + 7 * (WARMUP_SECONDS + 0.5) + runs * ROWS.length * (RUN_SECONDS + 0.5) + runs * 2 * (HANDLER_SECONDS + 0.5),
  async run(ctx) {
    const dir = ctx.tempDir('powerdns');
    const rows = ROWS.filter((r) => ctx.wants(r.table, r.id));
    const instances = new Map(rows.map((r) => [key(r.instance), r.instance]));
    const needs = (b: Backend): boolean => [...instances.values()].some((i) => i.backend === b);

    const gslbdSocket = join(dir, 'gslbd.sock');
    const nodeArgs = [...BACKEND_NODE_FLAGS, ...(ctx.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.cpuProfileDir}`] : [])];
    const gslbdStarting = needs('gslbd')
      ? startGslbd(ctx.processes, { cpu: SERVER_CPU, dir: ctx.tempDir('gslbd'), powerdnsSocket: gslbdSocket, nodeArgs }, ctx.signal)
      : undefined;
    gslbdStarting?.catch(() => undefined);
    const noopSocket = join(dir, 'noop.sock');
    const noop = needs('noop') ? await startNoop(ctx, noopSocket, dir, nodeArgs) : undefined;

    ctx.log('loading the quickstart snapshot (client mix, answer checks)');
    const { geo } = quickstartSnapshot();
    const clients = clientMix(geo, GSLB_CLIENTS, 3);
    const files: Record<Kind, { queryFile: string; binary: boolean; edns: boolean }> = {
      static: { queryFile: join(dir, 'static.txt'), binary: false, edns: true },
      gslb: { queryFile: join(dir, 'gslb-ecs.bin'), binary: true, edns: false },
    };
    writeFileSync(files.static.queryFile, `${STATIC_QUERIES.join('\n')}\n`);
    writeFileSync(files.gslb.queryFile, lengthPrefixed(clients.map((c, i) => queryPacket(i & 0xffff, 'www.example.test', 'A', c))));
    writeBindZone(dir);
    const geoip = geoipBackend(dir);

    await measureHandlers(ctx, clients);

    ctx.log('waiting for gslbd to load its location data');
    const gslbd = await gslbdStarting;
    const pdns = new Map<string, { port: number; proc: BenchProcess }>();
    for (const [k, inst] of instances) {
      const socket = inst.backend === 'gslbd' ? gslbdSocket : noopSocket;
      const backend =
        inst.backend === 'noop' || inst.backend === 'gslbd'
          ? ['launch=remote', `remote-connection-string=unix:path=${socket},timeout=2000,instance=bench-${k}`]
          : inst.backend === 'bind'
            ? ['launch=bind', `bind-config=${join(dir, 'named.conf')}`]
            : geoip;
      pdns.set(k, await startPdns(ctx, { name: k, backend, threads: inst.threads, caches: inst.caches }, ctx.tempDir(`pdns-${k}`), SERVER_CPU));
    }
    await checkAnswers(ctx, clients, pdns, instances);

    const backendOf = (inst: Instance): BackendProbe | undefined =>
      inst.backend === 'gslbd' ? gslbdProbe(gslbd!) : inst.backend === 'noop' ? noopProbe(noop!, noopSocket) : undefined;
    const dnsperf = (row: Row, seconds: number) =>
      runDnsperf(ctx.processes, { server: '127.0.0.1', port: pdns.get(key(row.instance))!.port, ...files[row.kind], seconds, cpu: LOAD_CPU }, dir, ctx.signal);

    ctx.log('warm-up runs');
    const warmed = new Set<string>();
    for (const row of rows) {
      if (warmed.has(key(row.instance))) continue;
      warmed.add(key(row.instance));
      await dnsperf(row, WARMUP_SECONDS);
    }
    for (let run = 1; run <= ctx.runs; run++) {
      for (const row of rows) {
        const server = pdns.get(key(row.instance))!;
        const backend = backendOf(row.instance);
        const backendPid = row.instance.backend === 'gslbd' ? gslbd!.process.pid : row.instance.backend === 'noop' ? noop!.pid : undefined;
        const before = { pdns: processCpuSeconds(server.proc.pid), backend: backend ? await backend.sample(false) : undefined };
        const switchesBefore = { pdns: processContextSwitches(server.proc.pid), backend: backendPid ? processContextSwitches(backendPid) : 0 };
        const r = await dnsperf(row, RUN_SECONDS);
        const pdnsSwitches = processContextSwitches(server.proc.pid) - switchesBefore.pdns;
        const backendSwitches = backendPid ? processContextSwitches(backendPid) - switchesBefore.backend : 0;
        const pdnsCpu = processCpuSeconds(server.proc.pid) - before.pdns;
        const details: Record<string, number> = {
          'pdns CPU µs/query': (pdnsCpu / r.completed) * 1e6,
          'lost %': (100 * r.lost) / (r.completed + r.lost),
          'pdns context switches/query': pdnsSwitches / r.completed,
        };
        if (backendPid) details['backend context switches/query'] = backendSwitches / r.completed;
        if (backend && before.backend) {
          const after = await backend.sample(true);
          const lookups = after.lookups - before.backend.lookups;
          const cpu = after.cpuSeconds - before.backend.cpuSeconds;
          details['backend CPU µs/query'] = (cpu / r.completed) * 1e6;
          details['pdns + backend CPU µs/query'] = ((cpu + pdnsCpu) / r.completed) * 1e6;
          details['lookups/query'] = lookups / r.completed;
          if (after.gcSeconds !== undefined && before.backend.gcSeconds !== undefined)
            details['gslbd GC pause µs/query'] = ((after.gcSeconds - before.backend.gcSeconds) / r.completed) * 1e6;
          // Answered from PowerDNS's caches: the few lookups left would give a meaningless ratio.
          if (lookups >= 0.1 * r.completed) details['backend CPU µs/lookup'] = (cpu / lookups) * 1e6;
        }
        const notNoError = r.completed - (r.rcodes.NOERROR ?? 0);
        if (notNoError > 0) ctx.note(`${row.table}/${row.id} run ${run}: ${notNoError} answers not NOERROR (${JSON.stringify(r.rcodes)})`);
        ctx.record(row.table, row.id, r.queriesPerSecond, details);
        ctx.log(
          `run ${run} ${row.table}/${row.id}: ${Math.round(r.queriesPerSecond)} q/s, pdns ${details['pdns CPU µs/query']!.toFixed(1)} µs/q, lost ${r.lost}`,
        );
      }
    }
    ctx.note(
      `PowerDNS: Debian pdns-server ${execFileSync('dpkg-query', ['-W', '-f=${Version}', 'pdns-server'], { encoding: 'utf8' })}, launch=remote|bind|geoip, ` +
        'receiver-threads=1, edns-subnet-processing=yes, remote timeout 2000 ms; "caches off" = cache-ttl=0 query-cache-ttl=0 (negquery 60), ' +
        '"default caches" = 20/20/60. pdns_server and the backend process share CPU 0. ' +
        `Static query file: ${STATIC_QUERIES.join(', ')} with EDNS; GSLB file: ${GSLB_CLIENTS} www A queries with ECS from the client mix of the resolve group. ` +
        'The do-nothing backend answers www with one fixed A record and scopeMask 24 (no selection), gslbd answers it from the quickstart (static proximity over GeoLite2), ' +
        "the geoip backend from a continent-keyed service over Debian geoip-database (2019 legacy country data), so its answers differ from gslbd's; bind serves www as a plain record (static table only).",
    );
  },
};

export default group;

/**
 * The protocol handler alone, in this process, pinned to one core: gslbd's `RemoteBackendSession`
 * (framing excluded) against the do-nothing backend's reply function, on the request lines of
 * whole queries (the zone's packet-less SOA lookup, then `www` twice with one client of the mix).
 * No sockets and no PowerDNS: the engine's own cost per query, less disturbed by other work than
 * the dnsperf rows. `CPU µs/query` is process CPU time, GC included.
 */
async function measureHandlers(ctx: BenchContext, clients: readonly MixClient[]): Promise<void> {
  if (!ctx.wants(T_HANDLER, 'noop-handler') && !ctx.wants(T_HANDLER, 'gslbd-handler')) return;
  const { snapshot } = quickstartSnapshot();
  const systemCtx = systemContext();
  const engine = new Engine(snapshot, systemCtx, createLogger('silent'));
  const metrics = new EngineMetrics();
  const session = new RemoteBackendSession({
    engine,
    metrics: new PowerDnsMetrics(metrics.registry),
    answers: new AnswerWrapper({ engine, metrics, log: engine.log }),
    log: engine.log,
    warnings: new RateLimitedLog(engine.log),
    lookOnlyCtx: { random: () => systemCtx.random(), now: () => systemCtx.now(), rotation: systemCtx.rotation.readOnlyView() },
  });
  // The lines exactly as PowerDNS writes them (json11), for both handlers.
  const soa = json11Line('lookup', { local: '0.0.0.0', qname: 'example.test.', qtype: 'ANY', 'real-remote': '0.0.0.0/0', remote: '0.0.0.0', 'zone-id': 1 });
  const www = clients.map((c) =>
    json11Line('lookup', {
      local: '127.0.0.1',
      qname: 'www.example.test.',
      qtype: 'ANY',
      'real-remote': `${formatIp(c.address)}/${c.sourcePrefix}`,
      remote: '127.0.0.1',
      'zone-id': 1,
    }),
  );
  const noop = new NoopSession();
  const handlers: Record<string, (line: string) => string> = {
    'noop-handler': (line) => noop.reply(line),
    'gslbd-handler': (line) => atOnce(session.handle(line)).text,
  };
  const rows = Object.fromEntries(
    Object.entries(handlers).map(([row, handle]) => [
      row,
      (i: number): number => {
        const line = www[i % www.length]!;
        return handle(soa).length + handle(line).length + handle(line).length;
      },
    ]),
  );
  await measureInProcess(ctx, T_HANDLER, rows, { seconds: HANDLER_SECONDS, cpu: HANDLER_CPU, lookupsPerQuery: 3 });
}

/**
 * Cumulative lookups and CPU of a backend process. Reading the lookup count costs the backend
 * CPU (a scrape, a stats request), so a run's window is [count, then CPU] … [CPU, then count]:
 * `cpuFirst` is false before a run and true after it.
 */
interface BackendProbe {
  sample(cpuFirst: boolean): Promise<{ lookups: number; cpuSeconds: number; gcSeconds?: number }>;
}

function gslbdProbe(gslbd: GslbdServer): BackendProbe {
  return {
    async sample(cpuFirst) {
      const early = cpuFirst ? processCpuSeconds(gslbd.process.pid) : 0;
      const text = await (await fetch(`http://127.0.0.1:${gslbd.adminPort}/metrics`)).text();
      const m = /^gslbd_powerdns_requests_total\{method="lookup",outcome="ok"\} (\d+)$/m.exec(text);
      // GC pauses of every kind (prom-client's default nodejs_gc_duration_seconds).
      const gcSeconds = [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*\} ([0-9.e+-]+)$/gm)].reduce((sum, g) => sum + Number(g[1]), 0);
      return { lookups: m ? Number(m[1]) : 0, cpuSeconds: cpuFirst ? early : processCpuSeconds(gslbd.process.pid), gcSeconds };
    },
  };
}

function noopProbe(proc: BenchProcess, socket: string): BackendProbe {
  return {
    async sample(cpuFirst) {
      const early = cpuFirst ? processCpuSeconds(proc.pid) : 0;
      const lookups = await new Promise<number>((resolveStats, reject) => {
        const c = connect(socket);
        let text = '';
        c.setEncoding('utf8');
        c.on('data', (d: string) => {
          text += d;
          if (text.includes('\n')) {
            c.destroy();
            resolveStats((JSON.parse(text) as { result: { lookups: number } }).result.lookups);
          }
        });
        c.on('error', reject);
        c.write('{"method":"benchStats","parameters":{}}\n');
      });
      return { lookups, cpuSeconds: cpuFirst ? early : processCpuSeconds(proc.pid) };
    },
  };
}

async function startNoop(ctx: BenchContext, socket: string, dir: string, nodeArgs: readonly string[]): Promise<BenchProcess> {
  const proc = ctx.processes.start('noop backend', process.execPath, [...nodeArgs, join(BENCH_DIST, 'noopRemoteBackend.js'), socket], {
    cpu: SERVER_CPU,
    logFile: join(dir, 'noop.log'),
  });
  for (let i = 0; !readFileSync(proc.logFile, 'utf8').includes('ready'); i++) {
    if (i > 100) throw new Error(`do-nothing backend not ready:\n${proc.tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return proc;
}

/**
 * Before measuring: every variant answers the static names; pdns + gslbd answers the GSLB name
 * exactly as gslbd's resolve() does in-process (data and ECS scope) for a sample of the client
 * mix; the do-nothing backend gives its fixed scoped answer; geoip answers with an address.
 */
async function checkAnswers(
  ctx: BenchContext,
  clients: readonly MixClient[],
  pdns: Map<string, { port: number }>,
  instances: Map<string, Instance>,
): Promise<void> {
  const { snapshot } = quickstartSnapshot();
  const resolveCtx = systemContext();
  for (const [k, inst] of instances) {
    const port = pdns.get(k)!.port;
    for (const q of STATIC_QUERIES) {
      const [name, type] = q.split(' ') as [string, 'A' | 'AAAA' | 'SOA'];
      const a = await exchange(port, queryPacket(1, name, type));
      if (a.rcode !== 'NOERROR' || a.answers.length === 0) throw new Error(`${k}: ${q} answered ${describe(a)}`);
    }
    if (inst.backend === 'bind') continue;
    let differs = 0;
    for (const client of clients.slice(0, CHECKED_CLIENTS)) {
      const a = await exchange(port, queryPacket(1, 'www.example.test', 'A', client));
      if (a.rcode !== 'NOERROR' || a.answers.length !== 1) throw new Error(`${k}: www A for ${JSON.stringify(client)} answered ${describe(a)}`);
      if (inst.backend === 'noop' && (a.answers[0] !== 'A 198.51.100.10' || a.scope !== 24)) throw new Error(`${k}: unexpected ${describe(a)}`);
      if (inst.backend === 'gslbd') {
        const expected = () => resolve({ name: 'www.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, snapshot, resolveCtx);
        const e = expected();
        const tie = new Set([e, expected(), expected()].map((x) => x.answers.map((r) => presentData(r.type, r.data)).join())).size > 1;
        if ((!tie && a.answers.join() !== e.answers.map((r) => `A ${presentData(r.type, r.data)}`).join()) || a.scope !== e.scope) {
          throw new Error(
            `${k}: pdns+gslbd answers ${describe(a)} for ${JSON.stringify(client)}; resolve() ${e.answers.map((r) => presentData(r.type, r.data)).join()} scope ${e.scope}`,
          );
        }
      }
      if (inst.backend === 'geoip' && a.scope === null) differs++;
    }
    if (differs > 0) ctx.note(`${k}: ${differs} of ${CHECKED_CLIENTS} answers carried no ECS scope`);
  }
  ctx.note(`answer check: pdns + gslbd answers and ECS scopes equal gslbd's resolve() for ${CHECKED_CLIENTS} clients of the mix at every setting`);
}

function describe(a: WireAnswer): string {
  return `${a.rcode} [${a.answers.join('; ')}] scope ${a.scope}`;
}

/** The static zone for the bind backend: the quickstart's records, www as a plain A record. */
function writeBindZone(dir: string): void {
  writeFileSync(join(dir, 'named.conf'), `zone "example.test" { type master; file "${join(dir, 'example.test.zone')}"; };\n`);
  writeFileSync(
    join(dir, 'example.test.zone'),
    [
      '$ORIGIN example.test.',
      '@ 300 IN SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60',
      '@ 300 IN NS ns1.example.test.',
      'ns1 300 IN A 192.0.2.53',
      'v6 300 IN AAAA 2001:db8::10',
      'alias 300 IN CNAME www.example.test.',
      'www 30 IN A 198.51.100.10',
      '',
    ].join('\n'),
  );
}
