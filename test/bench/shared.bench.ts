import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { freePort } from '../support/freePort.js';
import { largeConfig } from '../support/largeConfig.js';
import type { BenchGroup } from './harness/benchGroup.js';
import { runDnsperf } from './harness/dnsperf.js';
import { startGslbd } from './harness/gslbdServer.js';

const RECORDS = 1000;
const SECONDS = 8;

/**
 * The answer rate of the standalone listener with the shared store configured (a real
 * `redis-server` on loopback, src/process/sharedState/README.md) against the embedded default,
 * interleaved run by run on the same configuration: queries never touch Redis (the store's
 * replica is in process), so the two should be equal within the noise. On demand (`--filter shared`).
 */
const group: BenchGroup = {
  name: 'shared',
  description: 'answers/s with the Redis store configured against the embedded store (same configuration, interleaved)',
  onDemand: true,
  tables: [
    {
      id: 'shared',
      title: `Standalone listener with and without the Redis store (${RECORDS} records, dnsperf UDP ${SECONDS} s, gslbd CPU 0, dnsperf CPU 1)`,
      measure: 'queries/s',
      baseline: 'store-off',
      rows: [
        { id: 'store-off', label: 'embedded store (no `store`)' },
        { id: 'store-on', label: 'Redis store (`store.redis`, redis-server on loopback)' },
      ],
    },
  ],
  estimateSeconds: (runs) => 30 + runs * 2 * (SECONDS + 3),
  async run(ctx) {
    const dir = ctx.tempDir('shared');
    mkdirSync(join(dir, 'off'));
    mkdirSync(join(dir, 'on'));
    const redisPort = await freePort();
    ctx.processes.start(
      'redis-server',
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      {
        cpu: 1,
        logFile: join(dir, 'redis.log'),
      },
    );
    const config = parse(largeConfig({ records: RECORDS, ttl: 30 })) as Record<string, unknown>;
    const off = await startGslbd(ctx.processes, { cpu: 0, dir: join(dir, 'off'), config }, ctx.signal);
    const on = await startGslbd(
      ctx.processes,
      {
        cpu: 0,
        dir: join(dir, 'on'),
        config: { ...config, store: { redis: { url: `redis://127.0.0.1:${redisPort}`, node: 'bench', namespace: 'bench', connectTimeoutSeconds: 10 } } },
      },
      ctx.signal,
    );
    const status = (await (await fetch(`http://127.0.0.1:${on.adminPort}/status`)).json()) as { store?: { state?: string } };
    if (status.store?.state !== 'connected') throw new Error(`the store-on engine is not connected to Redis: ${JSON.stringify(status.store)}`);
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, Array.from({ length: RECORDS }, (_, i) => `r${i}.big.test A\n`).join(''));
    for (let run = 1; run <= ctx.runs; run++) {
      for (const [row, server] of [
        ['store-off', off],
        ['store-on', on],
      ] as const) {
        if (!ctx.wants('shared', row)) continue;
        const r = await runDnsperf(ctx.processes, { server: '127.0.0.1', port: server.dnsPort, queryFile: queries, seconds: SECONDS, cpu: 1 }, dir, ctx.signal);
        ctx.record('shared', row, r.queriesPerSecond, { 'lost %': (100 * r.lost) / (r.completed + r.lost), SERVFAIL: r.rcodes.SERVFAIL ?? 0 });
      }
    }
    ctx.note(`${RECORDS} static-proximity records (test/support/largeConfig.ts); both engines run side by side on CPU 0, measured one at a time, alternating.`);
  },
};
export default group;
