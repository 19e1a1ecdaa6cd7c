import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import type { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { formatIp } from '../../src/core/net/ipAddress.js';
import { explainQuery } from '../../src/pipeline/explain.js';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { clientMix } from '../bench/harness/clientMix.js';
import { CITY_IMAGE, readCityImage } from '../geo/cityImage.js';
import type { ReplaySummary } from '../../src/cli/whatIfReplay.js';
import { udpQuery } from '../support/dnsClient.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { waitFor } from '../support/waitFor.js';

/**
 * Counterfactual `/explain` (`POST /explain/what-if`) and what-if replay (`POST /what-if/replay`)
 * against an engine over the real GeoLite2-City data: with no hypothesis every client of the ECS
 * client mix gets the live answer; a data center down by hypothesis answers as the real
 * force-down override does, and the live state does not move; a metric value and a candidate
 * configuration (confined to the running configuration's directory) change the answer as they
 * would live; `gslbd ctl explain --what-if` asks the same from the command line, and
 * `gslbd ctl what-if` replays the engine's own query log.
 */

const TOKEN = 'what-if-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'gslbd-what-if-'));
/** The engine's log: its query log (every query sampled) among its other lines. */
const LOG = join(dir, 'gslbd.log');

const DCS = `datacenters:
  - { name: us-east, location: NA.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: eu-central, location: EU.DE, lat: 50.1, lon: 8.7 }
  - { name: ap-northeast, location: AS.JP, lat: 35.7, lon: 139.7 }
  - { name: sa-east, location: SA.BR, lat: -23.5, lon: -46.6 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.1 }
      - { dc: eu-west, address: 192.0.2.3 }
      - { dc: eu-central, address: 192.0.2.4 }
      - { dc: ap-northeast, address: 192.0.2.5 }
      - { dc: sa-east, address: 192.0.2.6 }
      - { dc: eu-west, address: "2001:db8::3" }
      - { dc: ap-northeast, address: "2001:db8::5" }
`;

function config(germany: string, port: number): string {
  return `listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { address: 127.0.0.1, port: ${port}, token: ${TOKEN} } }
dns: { queryLogSampleRate: 1 }
geo: { compiled: ${CITY_IMAGE} }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
${DCS}
records:
  - { name: prox.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us-east] }, failsafe: [198.51.100.1] }
  - { name: prox.example.test, type: AAAA, ttl: 30, service: web }
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
  - { name: metric.example.test, type: A, service: web, policy: { type: multi-source, source: host, metric: cpu, criterion: lowest } }
`;
}

let g: RunningGslbd;
let admin: string;
const mix = clientMix(openLocationDb(readCityImage(), 'typescript').db as RangeLocationDb, 3000, 20261201);
const clientText = (c: (typeof mix)[number]): string => `${formatIp(c.address)}/${c.sourcePrefix}`;

test.before(async () => {
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, config('eu-central', 0));
  writeFileSync(join(dir, 'candidate.yaml'), config('ap-northeast', 0));
  writeFileSync(join(dir, 'broken.yaml'), 'records: [');
  g = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync(LOG, 'a') });
  admin = `http://127.0.0.1:${g.admin!.port}`;
});
test.after.always(() => g?.stop());

const NO_CHANGE = { down: { dcs: [], endpoints: [] }, up: { dcs: [], endpoints: [] }, metrics: [] };

async function post(path: string, body: unknown, token?: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
  let res: Response;
  try {
    res = await fetch(`${admin}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  } catch (e) {
    // A kept-alive connection the admin listener closed after its 10 s idle bound (the explain loops
    // above hold the event loop that long on a loaded machine) fails the request before it is sent:
    // once more on a new connection (every request here is read-only or idempotent).
    if ((e as Error).message !== 'fetch failed') throw e;
    res = await fetch(`${admin}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  }
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

interface ExplainReply {
  changed: boolean;
  live: { answer: { answers: string[]; rcode: number } };
  hypothetical: { answer: { answers: string[]; rcode: number }; selections: { steps: unknown[] }[] };
}

async function whatIf(name: string, client: string, hypothesis: Record<string, unknown>, type = 'A'): Promise<ExplainReply> {
  const r = await post('/explain/what-if', { name, type, client, whatIf: hypothesis });
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
  return r.json as unknown as ExplainReply;
}

interface ReplayRow {
  live: { rcode: number; dcs: string[] };
  whatIf: { rcode: number; dcs: string[] };
}

async function replay(hypothesis: unknown, queries: { name: string; type: string; client: string }[]): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  for (let i = 0; i < queries.length; i += 5000) {
    const r = await post('/what-if/replay', { whatIf: hypothesis, queries: queries.slice(i, i + 5000) });
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.json)}`);
    rows.push(...(r.json.results as ReplayRow[]));
  }
  return rows;
}

const answersOf = (name: string, client: string, type = 'A'): string[] => explainQuery(g.engine, name, type, client).answer.answers;

test.serial('with no hypothesis, every client of the ECS mix gets the live answer (explain and replay)', async (t) => {
  // Deterministic records only: the AAAA record's two data centers tie for clients without a
  // location, and rotation splits the tie (the replay rotates on its own copies of the counters).
  const names = [
    ['prox.example.test', 'A'],
    ['st.example.test', 'A'],
  ] as const;
  const queries = mix.flatMap((c) => names.map(([name, type]) => ({ name, type, client: clientText(c) })));
  const rows = await replay(NO_CHANGE, queries);
  let differ = 0;
  queries.forEach((q, i) => {
    const live = g.engine.resolveLocal({
      name: q.name,
      type: q.type === 'A' ? 1 : 28,
      client: mix[Math.floor(i / names.length)]!,
      transport: 'udp',
      dnssecOk: false,
    });
    if (JSON.stringify(rows[i]!.whatIf.dcs) !== JSON.stringify(live.dcs) || rows[i]!.whatIf.rcode !== live.rcode) differ++;
    if (JSON.stringify(rows[i]!.live) !== JSON.stringify(rows[i]!.whatIf)) differ++;
  });
  t.is(differ, 0);
  t.true(new Set(rows.map((r) => r.live.dcs.join())).size >= 4, 'the mix reaches several data centers');
  // The whole answer (records, TTL, scope) through explain, on every 30th client.
  for (const c of mix.filter((_, i) => i % 30 === 0)) {
    const r = await whatIf('prox.example.test', clientText(c), NO_CHANGE);
    if (r.changed || JSON.stringify(r.hypothetical.answer) !== JSON.stringify(r.live.answer)) differ++;
  }
  t.is(differ, 0);
});

test.serial('a data center down by hypothesis answers as the real override does, and the live state does not move', async (t) => {
  const sample = mix.filter((_, i) => i % 40 === 0).map(clientText);
  const generation = g.engine.snapshot.generation;
  const before = sample.map((c) => answersOf('prox.example.test', c));
  const hypothetical: string[][] = [];
  for (const c of sample) hypothetical.push((await whatIf('prox.example.test', c, { down: { dcs: ['eu-west'] } })).hypothetical.answer.answers);
  t.is(g.engine.snapshot.generation, generation, 'nothing published');
  t.deepEqual(
    sample.map((c) => answersOf('prox.example.test', c)),
    before,
  );
  t.true(
    before.some((a, i) => a.join() !== hypothetical[i]!.join()),
    'some clients move away from eu-west',
  );
  t.false(hypothetical.some((a) => a.some((r) => r.endsWith(' 192.0.2.3'))));
  const set = await post('/health/override', { dc: 'eu-west', override: 'force-down' }, TOKEN);
  t.is(set.status, 200);
  t.teardown(() => void post('/health/override', { dc: 'eu-west', override: 'none' }, TOKEN));
  t.deepEqual(
    sample.map((c) => answersOf('prox.example.test', c)),
    hypothetical,
  );
  // And back up by hypothesis: the live answers from before the override.
  const up: string[][] = [];
  for (const c of sample) up.push((await whatIf('prox.example.test', c, { up: { dcs: ['eu-west'] } })).hypothetical.answer.answers);
  t.deepEqual(up, before);
  t.is((await post('/health/override', { dc: 'eu-west', override: 'none' }, TOKEN)).status, 200);
});

test.serial('a hypothetical metric value steers a multi-source record; the live answer stays', async (t) => {
  const metrics = ['us-east', 'eu-west', 'eu-central', 'ap-northeast', 'sa-east'].map((dc) => ({
    source: 'host',
    dc,
    metric: 'cpu',
    value: dc === 'sa-east' ? 5 : 90,
  }));
  const r = await whatIf('metric.example.test', '81.2.69.160', { metrics });
  t.deepEqual(
    r.hypothetical.answer.answers.map((a) => a.split(' ').pop()),
    ['192.0.2.6'],
  );
  t.true(JSON.stringify(r.hypothetical.selections).includes('what-if'), 'the trace says where the value came from');
  const other = await whatIf('metric.example.test', '81.2.69.160', { metrics: metrics.map((m) => ({ ...m, value: m.dc === 'ap-northeast' ? 1 : 50 })) });
  t.deepEqual(
    other.hypothetical.answer.answers.map((a) => a.split(' ').pop()),
    ['192.0.2.5'],
  );
  t.is(g.metricStore.read('host', '', 'sa-east', 0, Date.now()), NaN, 'nothing pushed to the store');
  const bad = await post('/explain/what-if', {
    name: 'metric.example.test',
    client: '81.2.69.160',
    whatIf: { metrics: [{ source: 'host', dc: 'us-east', metric: 'nope', value: 1 }] },
  });
  t.is(bad.status, 422);
});

test.serial('a candidate configuration moves exactly the networks its change moves; only files inside the configuration directory', async (t) => {
  const candidate = { config: 'candidate.yaml' };
  const queries = mix.map((c) => ({ name: 'st.example.test', type: 'A', client: clientText(c) }));
  const rows = await replay(candidate, queries);
  const moved = mix.filter((_, i) => rows[i]!.live.dcs.join() !== rows[i]!.whatIf.dcs.join());
  t.true(moved.length > 0, 'German networks move');
  for (const c of moved) {
    const e = explainQuery(g.engine, 'st.example.test', 'A', clientText(c));
    t.regex(e.client.location, /^EU\.DE/);
  }
  for (const [i, r] of rows.entries())
    if (r.live.dcs.join() !== r.whatIf.dcs.join()) t.deepEqual([r.live.dcs, r.whatIf.dcs], [['eu-central'], ['ap-northeast']], clientText(mix[i]!));
  const notMoved = mix.filter((c) => !moved.includes(c)).map((c) => explainQuery(g.engine, 'st.example.test', 'A', clientText(c)).client.location);
  t.false(
    notMoved.some((l) => l.startsWith('EU.DE')),
    'every German network moves',
  );
  const elsewhere = mkdtempSync(join(tmpdir(), 'gslbd-what-if-elsewhere-'));
  writeFileSync(join(elsewhere, 'candidate.yaml'), config('ap-northeast', 0));
  const outside = await post('/explain/what-if', {
    name: 'st.example.test',
    client: '81.2.69.160',
    whatIf: { config: join(relative(dir, elsewhere), 'candidate.yaml') },
  });
  t.is(outside.status, 422);
  t.regex(String(outside.json.error), /only files under/);
  const broken = await post('/explain/what-if', { name: 'st.example.test', client: '81.2.69.160', whatIf: { config: 'broken.yaml' } });
  t.is(broken.status, 422);
  const unknownDc = await post('/explain/what-if', { name: 'st.example.test', client: '81.2.69.160', whatIf: { down: { dcs: ['mars'] } } });
  t.is(unknownDc.status, 422);
  t.is(g.reloads.lastAttempt(), undefined, 'no reload ran');
});

test.serial('gslbd ctl explain --what-if asks the same from the command line', async (t) => {
  const run = ctlRun;
  const r = await run(['explain', 'prox.example.test', 'A', '-c', '81.2.69.160', '--what-if', 'down=eu-west', '--what-if', 'down=eu-central']);
  t.is(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout) as ExplainReply;
  t.true(json.changed);
  t.false(json.hypothetical.answer.answers.some((a) => a.endsWith(' 192.0.2.3') || a.endsWith(' 192.0.2.4')));
  const bad = await run(['explain', 'prox.example.test', '-c', '81.2.69.160', '--what-if', 'sideways=eu-west']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /unknown kind "sideways"/);
});

test.serial('gslbd ctl what-if replays the query log: nothing moves without a hypothesis; a DC down moves exactly its clients', async (t) => {
  const clients = mix.filter((c) => c.address.family === 4).slice(0, 150);
  for (const c of clients) {
    const r = await udpQuery(g.dns.bound[0]!, { name: 'st.example.test', type: 'A', edns: { ecs: clientText(c) } });
    t.is(r.rcode, 0);
  }
  // Every query twice more for the busiest network: counts weigh the shares.
  await udpQuery(g.dns.bound[0]!, { name: 'st.example.test', type: 'A', edns: { ecs: clientText(clients[0]!) } });
  await udpQuery(g.dns.bound[0]!, { name: 'st.example.test', type: 'A', edns: { ecs: clientText(clients[0]!) } });
  const logged = (): number =>
    readFileSync(LOG, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"query-log"')).length;
  await waitFor('the query log lines', () => logged() >= 152, 10000);
  const none = await ctlRun(['what-if', '--queries', LOG, '--json']);
  t.is(none.code, 0, none.stderr);
  const s0 = JSON.parse(none.stdout) as ReplaySummary;
  t.true(s0.queries >= 152);
  t.is(s0.movedQueries, 0);
  t.deepEqual(s0.shareBefore, s0.shareAfter);
  const live = new Map(clients.map((c) => [clientText(c), explainQuery(g.engine, 'st.example.test', 'A', clientText(c)).answer.answers.join()]));
  const inEuWest = [...live].filter(([, a]) => a.endsWith(' 192.0.2.3')).map(([c]) => c);
  t.true(inEuWest.length > 0);
  const down = await ctlRun(['what-if', '--queries', LOG, '--what-if', 'down=eu-west', '--json']);
  t.is(down.code, 0, down.stderr);
  const s1 = JSON.parse(down.stdout) as ReplaySummary;
  t.is(s1.shareAfter['eu-west'], undefined);
  t.true(s1.moves.every((m) => m.from === 'eu-west'));
  const movedNetworks = new Set(s1.topNetworks.map((n) => n.client));
  t.is(s1.movedNetworks, new Set(inEuWest.map((c) => c.replace(/\/\d+$/, '/24'))).size);
  for (const n of movedNetworks) t.true(inEuWest.includes(n), n);
  const table = await ctlRun(['what-if', '--queries', LOG, '--what-if', 'down=eu-west']);
  t.regex(table.stdout, /client networks change data center/);
  t.regex(table.stdout, /eu-west -> /);
});

test.serial('gslbd simulate without an engine (--against FILE) prints what the running engine replays for the same log and candidate', async (t) => {
  // The log holds the queries of the test above; the candidate sends Germany to ap-northeast.
  for (const extra of [[], ['--what-if', 'down=eu-west']]) {
    const running = await cliRun([
      'simulate',
      '--config',
      join(dir, 'candidate.yaml'),
      '--against',
      'running',
      '--admin',
      admin,
      '--queries',
      LOG,
      '--json',
      ...extra,
    ]);
    t.is(running.code, 0, running.stderr);
    const offline = await cliRun([
      'simulate',
      '--config',
      join(dir, 'candidate.yaml'),
      '--against',
      join(dir, 'gslbd.yaml'),
      '--queries',
      LOG,
      '--json',
      ...extra,
    ]);
    t.is(offline.code, 0, offline.stderr);
    const a = JSON.parse(running.stdout) as ReplaySummary;
    t.deepEqual(JSON.parse(offline.stdout), a);
    t.true(a.queries >= 152);
    t.true(a.movedQueries > 0);
    t.true(
      a.moves.every((m) => m.to === 'ap-northeast' && (m.from === 'eu-central' || (extra.length > 0 && m.from === 'eu-west'))),
      JSON.stringify(a.moves),
    );
  }
  const broken = await cliRun(['simulate', '--config', join(dir, 'broken.yaml'), '--against', join(dir, 'gslbd.yaml'), '--queries', LOG]);
  t.is(broken.code, 1);
  t.regex(broken.stderr, /^gslbd simulate: /);
});

function cliRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) =>
      done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

function ctlRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, 'ctl', '--admin', admin, ...args], { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) =>
      done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}
