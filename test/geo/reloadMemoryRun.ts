import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startGslbd } from '../../src/process/gslbdProcess.js';
import { CITY_IMAGE } from './cityImage.js';

/**
 * Repeated location reloads in a fresh engine process, for test/geo/reloadMemory.test.ts (which
 * starts it from dist/): the engine of a configuration with the GeoLite2-City compiled file and
 * `records` static-proximity records on distinct sets of data centers (each its own answer-class
 * tables, in huge pages), reloaded `reloads` times with a refresh of the location data (as
 * `POST /reload/geo`). Prints one JSON line: VmRSS (MiB, /proc/self/status) after the start and
 * after each reload once it settled, and the event-loop delay max (ms, monitorEventLoopDelay)
 * during each reload.
 *
 *   node dist/test/geo/reloadMemoryRun.js [reloads, default 10] [records, default 24]
 */
const reloads = Number(process.argv[2] ?? 10);
const records = Number(process.argv[3] ?? 24);
const dcs = [
  ['eu-west', 'EU.NL', 52.4, 4.9],
  ['us-east', 'NA.US', 39, -77.5],
  ['ap-ne', 'AS.JP', 35.7, 139.7],
  ['sa-east', 'SA.BR', -23.5, -46.6],
  ['af-south', 'AF.ZA', -26, 28],
  ['oc-se', 'OC.AU', -33.8, 151],
  ['eu-central', 'EU.DE', 50.1, 8.7],
] as const;
const sets: number[][] = [];
for (let i = 0; i < dcs.length; i++) for (let j = i + 1; j < dcs.length; j++) sets.push([i, j]);
for (let i = 0; i < dcs.length; i++) for (let j = i + 1; j < dcs.length; j++) for (let k = j + 1; k < dcs.length; k++) sets.push([i, j, k]);
const used = sets.slice(0, records);
const dir = mkdtempSync(join(tmpdir(), 'gslbd-reload-memory-'));
const file = join(dir, 'gslbd.yaml');
writeFileSync(
  file,
  `logging: { level: warn }
geo: { compiled: ${JSON.stringify(CITY_IMAGE)} }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters:
${dcs.map(([name, location, lat, lon]) => `  - { name: ${name}, location: ${location}, lat: ${lat}, lon: ${lon} }`).join('\n')}
services:
${used.map((s, i) => `  - { name: s${i}, endpoints: [${s.map((k) => `{ dc: ${dcs[k]![0]}, address: 192.0.2.${k + 1} }`).join(', ')}] }`).join('\n')}
records:
${used.map((s, i) => `  - { name: r${i}.example.test, type: A, service: s${i}, policy: { type: static-proximity, default: [${dcs[s[0]!]![0]}] } }`).join('\n')}
`,
);

const rss = (): number => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024);
const settle = (): Promise<void> => new Promise((done) => setTimeout(done, 1500));

const g = await startGslbd(file, { signals: false, watchFile: false });
await settle();
const result = { start: rss(), afterReload: [] as number[], eventLoopDelayMaxMs: [] as number[], failures: [] as string[] };
const delay = monitorEventLoopDelay({ resolution: 1 });
for (let i = 0; i < reloads; i++) {
  delay.reset();
  delay.enable();
  const r = await g.reload('reload memory test', { refresh: ['geo'] });
  delay.disable();
  if (!r.ok) result.failures.push(r.error);
  result.eventLoopDelayMaxMs.push(Math.round(delay.max / 1e5) / 10);
  await settle();
  result.afterReload.push(rss());
}
await g.stop();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
