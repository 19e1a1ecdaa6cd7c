import { pinAllThreads } from './affinity.js';
import type { BenchContext } from './benchGroup.js';

/** One in-process row: handles query number `i` and returns something to keep (a length). */
export type QueryHandler = (i: number) => number;

/**
 * Times in-process query handlers, in this process pinned to `cpu` (all threads), for the rows of
 * `table` that the selection wants: per run and row, 50,000 warm-up queries, then queries in
 * batches of 256 for `seconds`. Records queries/s (wall) with `CPU µs/query` (process user +
 * system time, GC included) and, when `lookupsPerQuery` is given, `CPU µs/lookup`. Runs
 * interleave the rows.
 * @throws Error when a handler returns only zeros (it answered nothing), or the group is aborted.
 */
export async function measureInProcess(
  ctx: BenchContext,
  table: string,
  rows: Readonly<Record<string, QueryHandler>>,
  options: { readonly seconds: number; readonly cpu: string; readonly lookupsPerQuery?: number },
): Promise<void> {
  const wanted = Object.keys(rows).filter((r) => ctx.wants(table, r));
  if (wanted.length === 0) return;
  const restore = pinAllThreads(process.pid, options.cpu);
  try {
    for (let run = 1; run <= ctx.runs; run++) {
      for (const row of wanted) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const query = rows[row]!;
        let sink = 0;
        for (let i = 0; i < 50_000; i++) sink += query(i);
        const cpuBefore = process.cpuUsage();
        const started = process.hrtime.bigint();
        const deadline = started + BigInt(options.seconds * 1e9);
        let queries = 0;
        while (process.hrtime.bigint() < deadline) {
          for (let k = 0; k < 256; k++) sink += query(queries++);
        }
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const cpu = process.cpuUsage(cpuBefore);
        if (sink === 0) throw new Error(`${table}/${row} answered nothing`);
        const cpuUsPerQuery = (cpu.user + cpu.system) / queries;
        const details: Record<string, number> = { 'CPU µs/query': cpuUsPerQuery };
        if (options.lookupsPerQuery) details['CPU µs/lookup'] = cpuUsPerQuery / options.lookupsPerQuery;
        ctx.record(table, row, queries / seconds, details);
        ctx.log(`run ${run} ${table}/${row}: ${Math.round(queries / seconds)} queries/s, ${cpuUsPerQuery.toFixed(2)} µs CPU/query`);
      }
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    restore();
  }
}
