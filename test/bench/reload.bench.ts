import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { largeConfig } from '../support/largeConfig.js';
import type { BenchGroup } from './harness/benchGroup.js';
import { runDnsperf } from './harness/dnsperf.js';
import { startGslbd } from './harness/gslbdServer.js';

/** Records of the configuration reloaded (about 4 MB of YAML). */
const RECORDS = 20_000;
const SECONDS = 10;
/** Most dnsperf runs a reload row waits for the reload through. */
const MAX_WINDOWS = 12;
/** When the reload is asked for, after dnsperf starts (s). */
const RELOAD_AFTER_S = 2;

/**
 * A reload of a 20,000-record configuration while dnsperf queries the standalone listener
 * (`-t 1`: an answer later than a second is lost), against the same run without a reload. The
 * reload pipeline (`src/process/reloadPipeline.ts`) parses on a worker thread and compiles in
 * slices, so the event loop is never held long: `max event-loop delay ms` is prom-client's
 * `nodejs_eventloop_lag_max_seconds` over the run (reset by the scrape before it). The reload row
 * queries in consecutive dnsperf runs until the new snapshot is published, so its delay and
 * losses cover the whole reload, the swap included; `reload s` is the time from the SIGHUP to the
 * new generation, `load average` the machine's 1-minute load at the row's end (the delays mean
 * little above a load of 2). On demand: start-up with 20,000 records and three runs of two rows
 * take two minutes or more.
 */
const group: BenchGroup = {
  name: 'reload',
  description: 'a 20,000-record reload under dnsperf -t 1 on the standalone listener, against no reload',
  onDemand: true,
  tables: [
    {
      id: 'reload',
      title: `Reload of ${RECORDS} records under dnsperf (UDP, -t 1, ${SECONDS} s, gslbd CPU 0, dnsperf CPU 1)`,
      measure: 'queries/s',
      baseline: 'no-reload',
      rows: [
        { id: 'no-reload', label: 'no reload' },
        { id: 'reload', label: `SIGHUP after ${RELOAD_AFTER_S} s: new TTL on every record` },
      ],
    },
  ],
  // The reload row may query through up to MAX_WINDOWS runs while the reload compiles.
  estimateSeconds: (runs) => 40 + runs * (SECONDS + 8 + MAX_WINDOWS * SECONDS + 8),
  async run(ctx) {
    const dir = ctx.tempDir('reload');
    const config = (ttl: number) => largeConfig({ records: RECORDS, ttl });
    const server = await startGslbd(ctx.processes, { cpu: 0, dir, config: parse(config(30)) as Record<string, unknown> }, ctx.signal);
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, Array.from({ length: RECORDS }, (_, i) => `r${i}.big.test A\n`).join(''));
    const configFile = join(dir, 'gslbd.yaml');
    const lagMaxMs = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${server.adminPort}/metrics`)).text();
      const m = /^nodejs_eventloop_lag_max_seconds ([0-9.e+-]+)$/m.exec(text);
      return m ? Number(m[1]) * 1000 : NaN;
    };
    const generation = async (): Promise<number> =>
      ((await (await fetch(`http://127.0.0.1:${server.adminPort}/status`)).json()) as { generation: number }).generation;
    let ttl = 30;
    for (let run = 1; run <= ctx.runs; run++) {
      for (const row of ['no-reload', 'reload'] as const) {
        if (!ctx.wants('reload', row)) continue;
        await lagMaxMs();
        const before = await generation();
        let reload: Promise<void> = Promise.resolve();
        if (row === 'reload') {
          reload = new Promise<void>((done) =>
            setTimeout(() => {
              // The listeners as startGslbd wrote them stay: only the records' TTL changes.
              const current = parse(config(++ttl)) as Record<string, unknown>;
              const written = parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
              current.listeners = written.listeners;
              current.logging = written.logging;
              writeFileSync(`${configFile}.tmp`, JSON.stringify(current));
              renameSync(`${configFile}.tmp`, configFile);
              process.kill(server.process.pid, 'SIGHUP');
              done();
            }, RELOAD_AFTER_S * 1000),
          );
        }
        // A reload row queries in windows of SECONDS until the new snapshot is published (at most
        // MAX_WINDOWS): on a loaded machine the sliced compilation of 20,000 records, which yields
        // to queries, takes longer than one window after the SIGHUP, and measuring only the first
        // window missed the end of the reload (the swap) and failed the row.
        const signalled = performance.now() + RELOAD_AFTER_S * 1000;
        let reloadSeconds = NaN;
        const watcher =
          row === 'reload'
            ? (async () => {
                while (Number.isNaN(reloadSeconds) && !ctx.signal.aborted) {
                  await new Promise((d) => setTimeout(d, 100));
                  if ((await generation()) !== before) reloadSeconds = (performance.now() - signalled) / 1000;
                }
              })()
            : Promise.resolve();
        const windows: Awaited<ReturnType<typeof runDnsperf>>[] = [];
        do {
          windows.push(
            await runDnsperf(
              ctx.processes,
              { server: '127.0.0.1', port: server.dnsPort, queryFile: queries, seconds: SECONDS, cpu: 1, timeoutSeconds: 1 },
              dir,
              ctx.signal,
            ),
          );
        } while (row === 'reload' && Number.isNaN(reloadSeconds) && windows.length < MAX_WINDOWS);
        await reload;
        if (row === 'reload' && Number.isNaN(reloadSeconds)) {
          reloadSeconds = -1;
          await watcher;
          throw new Error(`the reload did not finish within ${MAX_WINDOWS} runs of ${SECONDS} s:\n${server.process.tail()}`);
        }
        await watcher;
        const completed = windows.reduce((n, w) => n + w.completed, 0);
        const lost = windows.reduce((n, w) => n + w.lost, 0);
        const servfail = windows.reduce((n, w) => n + (w.rcodes.SERVFAIL ?? 0), 0);
        const seconds = windows.reduce((n, w) => n + w.runSeconds, 0);
        const r = { queriesPerSecond: completed / seconds, completed, lost, rcodes: { SERVFAIL: servfail } };
        const loadAverage = loadavg()[0]!;
        const total = r.completed + r.lost;
        ctx.record('reload', row, r.queriesPerSecond, {
          'lost %': (100 * r.lost) / total,
          SERVFAIL: r.rcodes.SERVFAIL ?? 0,
          'max event-loop delay ms': await lagMaxMs(),
          ...(row === 'reload' ? { 'reload s': reloadSeconds, 'dnsperf runs': windows.length } : {}),
          'load average': loadAverage,
        });
      }
    }
    ctx.note(
      `${RECORDS} static-proximity records in one zone (test/support/largeConfig.ts); the reload is a rename and SIGHUP (the watch sees the same edit: one reload).`,
    );
  },
};
export default group;
