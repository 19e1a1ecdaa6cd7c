import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import type { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import type { ReplaySummary } from '../../src/cli/whatIfReplay.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import { explainQuery } from '../../src/pipeline/explain.js';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { parseDnsperfOutput } from '../bench/harness/dnsperf.js';
import { lengthPrefixed, queryPacket } from '../bench/harness/dnsWire.js';
import { clientMix } from '../bench/harness/clientMix.js';
import { CITY_IMAGE, readCityImage } from '../geo/cityImage.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { waitFor } from '../support/waitFor.js';

/**
 * `gslbd simulate` against issue 25's replay tests, over the real GeoLite2-City data and the ECS
 * client mix: `--against running` with a file of the running configuration's content moves no
 * network for deterministic policies, and random and round-robin records keep their shares within
 * ±1 point; a candidate that sends one country to another data center moves exactly that
 * country's networks; and the shares it predicts for the candidate are within ±2 points of the
 * answers a real dnsperf run (`-B`, the same queries with their ECS options) gets from an engine
 * started on the candidate, counted per data center from that engine's query log.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-simulate-'));

function config(germany: string): string {
  return `listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { address: 127.0.0.1, port: 0 } }
dns: { queryLogSampleRate: 1 }
geo: { compiled: ${CITY_IMAGE} }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters:
  - { name: us-east, location: NA.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: eu-central, location: EU.DE, lat: 50.1, lon: 8.7 }
  - { name: ap-northeast, location: AS.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.1 }
      - { dc: eu-west, address: 192.0.2.3 }
      - { dc: eu-central, address: 192.0.2.4 }
      - { dc: ap-northeast, address: 192.0.2.5 }
records:
  - { name: prox.example.test, type: A, service: web, policy: { type: static-proximity, default: [us-east] } }
  - name: st.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
        - { when: { clientLocation: ["*.DE"] }, dcs: [${germany}] }
        - { when: { clientLocation: EU }, dcs: [eu-west] }
        - { when: { clientLocation: [NA, SA] }, dcs: [us-east] }
        - { dcs: [ap-northeast] }
  - { name: rr.example.test, type: A, service: web, policy: { type: static, rules: [{ dcs: [[us-east, eu-west, ap-northeast]] }] } }
  - { name: rnd.example.test, type: A, service: web, dcWeights: { us-east: 70, eu-west: 30 }, policy: { type: static, rules: [{ dcs: [[us-east, eu-west]] }] } }
`;
}

const mix = clientMix(openLocationDb(readCityImage(), 'typescript').db as RangeLocationDb, 3000, 20261202);
const clientText = (c: (typeof mix)[number]): string => `${formatIp(c.address)}/${c.sourcePrefix}`;
/** A query-log line as the DNS front door writes it (`src/doors/dns/handleMessage.ts`). */
const logLine = (name: string, client: string): string =>
  JSON.stringify({ level: 30, time: 0, component: 'query-log', qname: name, qtype: 'A', transport: 'udp', client, ecs: true, msg: 'query' });

let g: RunningGslbd;
let admin: string;

test.before(async () => {
  writeFileSync(join(dir, 'gslbd.yaml'), config('eu-central'));
  writeFileSync(join(dir, 'same.yaml'), config('eu-central'));
  writeFileSync(join(dir, 'candidate.yaml'), config('ap-northeast'));
  // The deterministic records over the client mix, every network twice for the busiest tenth.
  const det = mix.flatMap((c, i) =>
    ['prox.example.test', 'st.example.test'].flatMap((n) => Array<string>(i % 10 === 0 ? 2 : 1).fill(logLine(n, clientText(c)))),
  );
  writeFileSync(join(dir, 'deterministic.log'), `${det.join('\n')}\n{"level":30,"msg":"not a query"}\n`);
  // Round-robin and weighted random over 20,000 networks each: a share per network is one draw.
  const drawn = Array.from({ length: 20000 }, (_, i) => `100.${(i >> 8) & 255}.${i & 255}.0/24`).flatMap((c) => [
    logLine('rr.example.test', c),
    logLine('rnd.example.test', c),
  ]);
  writeFileSync(join(dir, 'drawn.log'), `${drawn.join('\n')}\n`);
  g = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'running.log'), 'a') });
  admin = `http://127.0.0.1:${g.admin!.port}`;
});
test.after.always(() => g?.stop());

function simulate(args: string[]): Promise<ReplaySummary> {
  return new Promise((done, reject) => {
    execFile(process.execPath, [CLI, 'simulate', '--admin', admin, '--json', ...args], { cwd: REPO_ROOT, timeout: 120000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : done(JSON.parse(stdout) as ReplaySummary),
    );
  });
}

test.serial('--against running with the same content from a file moves no network; random and round-robin shares stay within ±1 point', async (t) => {
  const same = await simulate(['--config', join(dir, 'same.yaml'), '--against', 'running', '--queries', join(dir, 'deterministic.log')]);
  t.is(same.queries, 6600);
  t.is(same.movedNetworks, 0);
  t.is(same.movedQueries, 0);
  t.deepEqual(same.shareAfter, same.shareBefore);
  t.deepEqual(same.failsafe, []);
  const drawn = await simulate(['--config', join(dir, 'same.yaml'), '--against', 'running', '--queries', join(dir, 'drawn.log')]);
  t.is(drawn.queries, 40000);
  t.deepEqual(Object.keys(drawn.shareAfter), Object.keys(drawn.shareBefore));
  for (const dc of Object.keys(drawn.shareBefore)) t.true(Math.abs(drawn.shareAfter[dc]! - drawn.shareBefore[dc]!) <= 1, `${dc}: ${JSON.stringify(drawn)}`);
  // us-east: a third of round-robin and 70 % of the weighted draw: (33.3 + 70) / 2.
  t.true(Math.abs(drawn.shareBefore['us-east']! - 51.67) <= 2, JSON.stringify(drawn.shareBefore));
});

test.serial('a candidate that sends Germany to another data center moves exactly the German networks', async (t) => {
  const s = await simulate(['--config', join(dir, 'candidate.yaml'), '--against', 'running', '--queries', join(dir, 'deterministic.log')]);
  const german = new Set(mix.map(clientText).filter((c) => explainQuery(g.engine, 'st.example.test', 'A', c).client.location.startsWith('EU.DE')));
  t.true(german.size > 10, `${german.size} German networks in the mix`);
  const germanQueries = mix.reduce((n, c, i) => n + (german.has(clientText(c)) ? (i % 10 === 0 ? 2 : 1) : 0), 0);
  t.deepEqual(s.moves, [{ from: 'eu-central', to: 'ap-northeast', queries: germanQueries, networks: german.size }]);
  t.is(s.movedNetworks, german.size);
  for (const n of s.topNetworks) t.true(german.has(n.client) && n.name === 'st.example.test', n.client);
  const capped = await simulate([
    '--config',
    join(dir, 'candidate.yaml'),
    '--against',
    'running',
    '--queries',
    join(dir, 'deterministic.log'),
    '--capacity',
    `ap-northeast=${s.shareBefore['ap-northeast']! + 0.01}%`,
  ]);
  t.deepEqual(capped.overCapacity, [
    { dc: 'ap-northeast', capacity: s.shareBefore['ap-northeast']! + 0.01, before: s.shareBefore['ap-northeast'], after: s.shareAfter['ap-northeast'] },
  ]);
});

test.serial('the predicted shares are within ±2 points of a real dnsperf run against an engine on the candidate', async (t) => {
  const names = ['prox.example.test', 'st.example.test', 'rnd.example.test'];
  const queries = mix.flatMap((c) => names.map((name) => ({ name, client: c })));
  writeFileSync(join(dir, 'queries.log'), queries.map((q) => logLine(q.name, clientText(q.client))).join('\n'));
  const predicted = await simulate(['--config', join(dir, 'candidate.yaml'), '--against', 'running', '--queries', join(dir, 'queries.log')]);
  t.true(predicted.movedQueries > 0);

  const candidateLog = join(dir, 'candidate-engine.log');
  const engine = await startGslbd(join(dir, 'candidate.yaml'), { signals: false, watchFile: false, logDestination: openSync(candidateLog, 'a') });
  try {
    writeFileSync(join(dir, 'queries.bin'), lengthPrefixed(queries.map((q, i) => queryPacket(i & 0xffff, q.name, 'A', q.client))));
    const port = engine.dns.bound[0]!.port;
    const perf = await dnsperf([
      '-s',
      '127.0.0.1',
      '-p',
      String(port),
      '-B',
      '-d',
      join(dir, 'queries.bin'),
      '-n',
      '1',
      '-c',
      '1',
      '-q',
      '50',
      '-Q',
      '3000',
      '-t',
      '5',
    ]);
    t.true(perf.completed >= queries.length * 0.95, JSON.stringify(perf));
    const answered = (): { component?: string; dcs?: string[] }[] =>
      readFileSync(candidateLog, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"query-log"'))
        .map((l) => JSON.parse(l) as { dcs?: string[] });
    await waitFor('the query log of the dnsperf run', () => answered().length >= perf.completed, 20000);
    const perDc = new Map<string, number>();
    for (const a of answered()) {
      const dcs = a.dcs ?? [];
      if (dcs.length === 0) perDc.set('-', (perDc.get('-') ?? 0) + 1);
      for (const dc of dcs) perDc.set(dc, (perDc.get(dc) ?? 0) + 1 / dcs.length);
    }
    const total = answered().length;
    const measured = Object.fromEntries([...perDc].map(([dc, n]) => [dc, (100 * n) / total]));
    t.deepEqual(Object.keys(measured).sort(), Object.keys(predicted.shareAfter).sort());
    for (const [dc, share] of Object.entries(predicted.shareAfter))
      t.true(Math.abs(share - measured[dc]!) <= 2, `${dc}: predicted ${share} %, dnsperf ${measured[dc]} % (${JSON.stringify(measured)})`);
  } finally {
    await engine.stop();
  }
});

function dnsperf(args: string[]): Promise<ReturnType<typeof parseDnsperfOutput>> {
  return new Promise((resolve, reject) => {
    const c = spawn('dnsperf', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('error', (e) => reject(new Error(`dnsperf is missing: run bash test/setup.sh (apt package dnsperf): ${e.message}`)));
    c.on('exit', () => {
      try {
        resolve(parseDnsperfOutput(out));
      } catch (e) {
        reject(new Error(`${(e as Error).message}:\n${out}`));
      }
    });
  });
}
