import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { largeConfig } from '../support/largeConfig.js';
import type { BenchGroup } from './harness/benchGroup.js';
import { runDnsperf } from './harness/dnsperf.js';
import { startGslbd } from './harness/gslbdServer.js';

/** Records of the configuration reloaded (about 4 MB of YAML). */
const RECORDS = 20_000;
const SECONDS = 10;
/** When the reload is asked for, after dnsperf starts (s). */
const RELOAD_AFTER_S = 2;

/**
 * A reload of a 20,000-record configuration while dnsperf queries the standalone listener
 * (`-t 1`: an answer later than a second is lost), against the same run without a reload. The
 * reload pipeline (`src/process/reloadPipeline.ts`) parses on a worker thread and compiles in
 * slices, so the event loop is never held long: `max event-loop delay ms` is prom-client's
 * `nodejs_eventloop_lag_max_seconds` over the run (reset by the scrape before it). On demand:
 * start-up with 20,000 records and three runs of two rows take about two minutes.
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
  estimateSeconds: (runs) => 40 + runs * 2 * (SECONDS + 8),
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
        const r = await runDnsperf(
          ctx.processes,
          { server: '127.0.0.1', port: server.dnsPort, queryFile: queries, seconds: SECONDS, cpu: 1, timeoutSeconds: 1 },
          dir,
          ctx.signal,
        );
        await reload;
        if (row === 'reload' && (await generation()) === before)
          throw new Error(`the reload did not finish within the ${SECONDS} s run:\n${server.process.tail()}`);
        const total = r.completed + r.lost;
        ctx.record('reload', row, r.queriesPerSecond, {
          'lost %': (100 * r.lost) / total,
          SERVFAIL: r.rcodes.SERVFAIL ?? 0,
          'max event-loop delay ms': await lagMaxMs(),
        });
      }
    }
    ctx.note(
      `${RECORDS} static-proximity records in one zone (test/support/largeConfig.ts); the reload is a rename and SIGHUP (the watch sees the same edit: one reload).`,
    );
  },
};
export default group;
