import test from 'ava';
import { HypotheticalHealthView } from '../../src/admin/hypotheticalViews.js';
import { replayRows } from '../../src/admin/replayRows.js';
import { whatIfSchema } from '../../src/admin/whatIfSchema.js';
import { summariseReplay, type LoggedQuery } from '../../src/cli/whatIfReplay.js';
import { readQueryLog } from '../../src/cli/queryLogScan.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import { allUpHealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { systemContext } from '../../src/core/views/resolveContext.js';
import { loadConfigFile } from '../../src/process/loadConfig.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { clientMix } from '../bench/harness/clientMix.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import type { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { readCityImage, repoRoot } from '../geo/cityImage.js';
import { join } from 'node:path';

/**
 * The fast replay (`src/admin/replayRows.ts`: queries in address order, an answer reused over its
 * `reuseScope` block; `src/cli/queryLogScan.ts`: the log read without an object per line) against
 * the slow one (every line parsed with JSON.parse, every distinct query asked alone on both
 * snapshots) on the same log of the quickstart over the GeoLite2 city data, with eu-west down by
 * hypothesis: the same distinct queries and counts, the same per-DC shares, moves, moved networks
 * and fail-safe records.
 */

test('the fast replay gives the per-DC shares, moves and fail-safe records of asking every query alone', (t) => {
  const file = join(repoRoot, 'examples/quickstart.yaml');
  const { config } = loadConfigFile(file);
  const geo = openLocationDb(readCityImage(), 'typescript').db as RangeLocationDb;
  const snapshot = buildSnapshot(file, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, Date.now());
  const w = whatIfSchema.parse({ down: { dcs: ['eu-west', 'us-east'] } });
  const health = new HypotheticalHealthView(allUpHealthView, w);
  const candidate = buildSnapshot(file, config, { geo, health, metrics: emptyMetricView }, Date.now(), snapshot);
  health.know(candidate.records.flatMap((r) => r.candidates.flatMap((c) => c.endpoints.map((e) => e.key))));
  const clients = clientMix(geo, 6000, 7).map((c) => `${formatIp(c.address)}/${c.sourcePrefix}`);
  const names: [string, string][] = [
    ['www.example.test', 'A'],
    ['www.example.test', 'AAAA'],
    ['alias.example.test', 'A'],
    ['nx.example.test', 'A'],
    ['v6.example.test', 'AAAA'],
    ['www.example.test', 'BOGUS'],
  ];
  const lines: string[] = [];
  for (let i = 0; i < 30000; i++) {
    const [qname, qtype] = names[i % 7 === 6 ? (i >> 3) % names.length : 0]!;
    lines.push(JSON.stringify({ level: 30, component: 'query-log', qname, qtype, client: clients[(i * 7919) % clients.length]!, dcs: [], msg: 'query' }));
    if (i % 97 === 0) lines.push(JSON.stringify({ level: 40, msg: 'something else' }));
  }
  const text = lines.join('\n');

  const slowQueries = new Map<string, LoggedQuery & { count: number }>();
  for (const l of lines) {
    const e = JSON.parse(l) as { component?: string; qname: string; qtype: string; client: string };
    if (e.component !== 'query-log') continue;
    const key = `${e.qname} ${e.qtype} ${e.client}`;
    const q = slowQueries.get(key);
    if (q) q.count++;
    else slowQueries.set(key, { name: e.qname, type: e.qtype, client: e.client, count: 1 });
  }
  const slow = [...slowQueries.values()];
  const slowRows = slow.map((q) => replayRows(snapshot, candidate, systemContext(), [q])[0]!);

  const fast = readQueryLog(Buffer.from(text, 'utf8')).queries;
  t.deepEqual(fast, slow);
  const fastRows = replayRows(snapshot, candidate, systemContext(), fast);
  t.deepEqual(fastRows, slowRows);
  const s = summariseReplay(fast, fastRows, { 'ap-northeast': 50 });
  t.deepEqual(s, summariseReplay(slow, slowRows, { 'ap-northeast': 50 }));
  t.true(s.movedNetworks > 100, `${s.movedNetworks} networks move`);
  t.true(s.errors > 0);
  t.deepEqual(s.failsafe, []);
  t.deepEqual(
    s.overCapacity.map((c) => c.dc),
    ['ap-northeast'],
  );
});
