import test from 'ava';
import { presentData } from '../../core/dns/presentation.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { TYPE_CODES } from '../../core/dns/records.js';
import { withHealthView, type Snapshot } from '../snapshot.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { formatIp, parseCidr, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { HealthMonitor } from '../../capabilities/health/healthMonitor.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { allUpHealthView, type AdminOverride, type HealthStatus, type HealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import type { ResolveContext } from '../../core/views/resolveContext.js';
import { RotationStore } from '../../core/views/rotationStore.js';
import { resolve } from '../zones/authoritative.js';
import { type Answer } from '../../core/model/query.js';
import { nameRrsets } from '../zones/nameRrsets.js';
import { viewOf } from '../../../test/health/gslbFixture.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { PREF_ACTIONS, PREF_RECORD, SEED002_APP_SERVICE, SEED002_DATACENTERS_WITH_COORDINATES } from '../../../test/support/seed002Service.js';
import { CopyableRandom, seededUint32 } from '../../../test/support/seededRandom.js';
import { MAX_DECISIONS } from './decisionCache.js';
import type { LocationClasses } from './answerClasses.js';
import { unpackId, unpackPrefix } from '../../core/lpm/rangeTable.js';
import { ipv4BlocksScope } from '../../core/net/ipv4InIpv6.js';
import type { Client } from '../../core/model/query.js';

/**
 * The decision cache against the pipeline it replaces: the same configuration compiled twice,
 * with and without decision caches, asked the same questions in the same state (health view,
 * rotation, random source, clock), must give the same answers, TTLs, ECS scopes, rcodes and data
 * centers — while the cached one really serves from its cache.
 */

const CONFIG = `
${EXAMPLE_ZONE}
${SEED002_DATACENTERS_WITH_COORDINATES}
${SEED002_APP_SERVICE}
  - name: web
    endpoints:
      - { dc: uk, address: 198.51.100.1 }
      - { dc: hk, address: 198.51.100.2 }
      - { dc: in, address: 198.51.100.3 }
  - name: pool
    endpoints:
      - { dc: uk, address: 203.0.113.1 }
      - { dc: uk, address: 203.0.113.2 }
      - { dc: uk, address: 203.0.113.3 }
      - { dc: hk, address: 203.0.113.4 }
      - { dc: hk, address: 203.0.113.5, weight: 3 }
      - { dc: zmb, address: 203.0.113.6 }
records:
${PREF_RECORD}
  - { name: prox.example.test, type: A, service: app, health: { downTtl: 7 } }
  - { name: www.example.test, type: A, service: web }
  - { name: rr.example.test, type: A, service: pool, policy: { type: static-proximity, pickDcCount: 2 } }
  - { name: all.example.test, type: A, service: pool, policy: { type: static-proximity, balanceAlgorithm: all }, health: { allDown: fail-closed } }
  - { name: wr.example.test, type: A, service: pool, policy: { type: static-proximity, balanceAlgorithm: weighted-random } }
  - name: st.example.test
    type: A
    service: app
    health: { coldStart: { waitMs: 400 }, allDown: fail-closed, downTtl: 5 }
    policy:
      type: static
      subnetOverlap: most-specific
      rules:
        - { when: { clientSubnet: [10.0.0.0/8] }, dcs: [uk] }
        - { when: { all: [{ clientSubnet: [10.20.0.0/16, "2001:db8::/32"] }, { clientLocation: Asia }] }, dcs: [[hk, jpn]] }
        - { when: { not: { clientLocation: Europe } }, dcs: [in, sd] }
  - { name: ms.example.test, type: A, service: app, policy: { type: multi-source, source: host, metric: cpu, criterion: lowest } }
  - name: "*.w.example.test"
    type: A
    service: app
    policies:
      rules:
        - { name: by-name, when: { qname: [a.w.example.test] }, action: internal-view }
actions:
${PREF_ACTIONS}
`;

const GEO_ENTRIES = [
  { cidr: '10.0.0.0/8', location: 'Europe.UK.London', lat: 51.5, lon: -0.1 },
  { cidr: '10.20.0.0/16', location: 'Asia.HK', lat: 22.3, lon: 114.2 },
  { cidr: '41.0.0.0/8', location: 'Africa.ZMB.Lusaka', lat: -15.4, lon: 28.3 },
  { cidr: '41.128.0.0/9', location: 'Africa.SD', lat: 15.6, lon: 32.5 },
  { cidr: '102.0.0.0/8', location: 'Africa.EG', lat: 30.0, lon: 31.2 },
  { cidr: '5.0.0.0/8', location: 'Europe.RU', lat: 55.8, lon: 37.6 },
  { cidr: '1.0.0.0/8', location: 'Asia.JPN', lat: 35.7, lon: 139.7 },
  { cidr: '49.0.0.0/8', location: 'Asia.IN', lat: 19.1, lon: 72.9 },
  { cidr: '172.16.0.0/12', location: 'Europe.UK', lat: 51.5, lon: -0.1 },
  { cidr: '8.0.0.0/8', location: 'NorthAmerica.US', lat: 38.9, lon: -77.0 },
  { cidr: '9.0.0.0/8', location: '' },
  { cidr: '2001:db8::/32', location: 'Asia.HK', lat: 22.3, lon: 114.2 },
  { cidr: '2c0f::/16', location: 'Africa.ZMB', lat: -15.4, lon: 28.3 },
  { cidr: '2a00::/12', location: 'Europe.RU', lat: 55.8, lon: 37.6 },
  { cidr: 'fc00::/7', location: 'Europe.UK', lat: 51.5, lon: -0.1 },
];
const geo = prefixLocationDb(GEO_ENTRIES);
const config = parseConfigText(CONFIG);
const NOW = 1_700_000_000_000;

const CACHEABLE = ['pref.example.test', 'prox.example.test', 'www.example.test', 'rr.example.test', 'all.example.test', 'wr.example.test', 'st.example.test'];
const NOT_CACHEABLE = ['ms.example.test', 'x.w.example.test', 'a.w.example.test'];

function snapshots(health: HealthView = allUpHealthView): { cached: Snapshot; reference: Snapshot } {
  const state = { geo, health, metrics: emptyMetricView };
  return { cached: buildSnapshot('<test>', config, state, NOW), reference: buildSnapshot('<test>', config, state, NOW, undefined, { reuseDecisions: false }) };
}

/** Everything of an answer the cache must not change. */
function shape(a: Answer): unknown {
  return {
    rcode: a.rcode,
    answers: a.answers.map((r) => [r.name, r.type, r.ttl, r.data]),
    authority: a.authority.map((r) => [r.name, r.type, r.ttl]),
    scope: a.scope,
    dcs: a.dcs,
  };
}

function randomClient(u32: () => number): Client {
  const pick = u32() % 10;
  let address: IpAddress;
  if (pick < 6) {
    const e = GEO_ENTRIES.filter((g) => !g.cidr.includes(':'))[u32() % 11]!;
    const base = parseCidr(e.cidr).address.w0;
    const span = 2 ** (32 - parseCidr(e.cidr).prefix);
    const w = (base + (u32() % span)) >>> 0;
    address = parseIp(`${w >>> 24}.${(w >>> 16) & 255}.${(w >>> 8) & 255}.${w & 255}`);
  } else if (pick < 7) {
    address = parseIp(`${u32() % 224}.${u32() % 256}.${u32() % 256}.${u32() % 256}`);
  } else if (pick < 8) {
    // IPv4-mapped IPv6: folded to IPv4 by the parser, as the front doors receive it.
    address = parseIp(`::ffff:${[41, 10, 1, 102][u32() % 4]}.${u32() % 256}.${u32() % 256}.${u32() % 256}`);
  } else {
    const prefixes = ['2001:db8', '2c0f:f0', '2a01:4f8', 'fc00:1', 'fd12:3456', '2600:1f18'];
    const hex = (): string => (u32() % 65536).toString(16);
    address = parseIp(`${prefixes[u32() % prefixes.length]}:${hex()}:${hex()}::${hex()}`);
  }
  const bits = address.family === 4 ? 32 : 128;
  const sourcePrefix = u32() % 3 === 0 ? bits : address.family === 4 ? 24 : 56;
  return { address, sourcePrefix, fromEcs: sourcePrefix < bits };
}

const ENDPOINT_KEYS = config.services.flatMap((s) => s.endpoints.map((e) => `${s.name}/${e.dc}/${e.address}`));
const DCS = config.datacenters.map((d) => d.name);

function randomView(u32: () => number, nowMs: number): HealthView {
  const statuses: Record<string, HealthStatus> = {};
  const overrides: Record<string, AdminOverride> = {};
  for (const key of ENDPOINT_KEYS) {
    const r = u32() % 100;
    statuses[key] = r < 70 ? 'up' : r < 88 ? 'down' : 'unknown';
    const o = u32() % 100;
    if (o < 3) overrides[key] = 'force-up';
    else if (o < 6) overrides[key] = 'force-down';
    else if (o < 9) overrides[key] = 'drain';
  }
  const hosts: Record<string, HealthStatus> = {};
  for (const dc of DCS) if (u32() % 100 < 5) hosts[dc] = 'down';
  // Unknown endpoints began monitoring up to 800 ms ago: some cold-start waits still run.
  return viewOf(statuses, { overrides, hosts, sinceMs: nowMs - (u32() % 800) });
}

test('differential: cached resolve() equals the pipeline for every client, health change and override', (t) => {
  const u32 = seededUint32(6006);
  let { cached, reference } = snapshots();
  let nowMs = NOW;
  const random = new CopyableRandom(7);
  const ctx: ResolveContext = { random: random.next, now: () => nowMs, rotation: new RotationStore() };
  const served = new Map<string, number>();
  const asked = new Map<string, number>();
  const names = [...CACHEABLE, ...NOT_CACHEABLE];
  for (let i = 0; i < 12_000; i++) {
    if (u32() % 40 === 0) {
      const view = randomView(u32, nowMs);
      cached = withHealthView(cached, view);
      reference = withHealthView(reference, view);
    }
    nowMs += u32() % 60;
    const name = names[u32() % names.length]!;
    const client = randomClient(u32);
    const q = { name, type: TYPE_CODES.A, client, transport: 'udp' as const };
    const copy = random.copy();
    const want = resolve(q, reference, { random: copy.next, now: () => nowMs, rotation: ctx.rotation.clone() });
    const got = resolve(q, cached, ctx);
    if (JSON.stringify(shape(got)) !== JSON.stringify(shape(want))) {
      t.deepEqual(shape(got), shape(want), `query ${i}: ${name} for ${formatIp(client.address)}/${client.sourcePrefix}`);
      return;
    }
    asked.set(name, (asked.get(name) ?? 0) + 1);
    if (got.answers.length > 0 && Object.isFrozen(got.answers[0])) served.set(name, (served.get(name) ?? 0) + 1);
  }
  // The cache really answered: most queries of the single-endpoint records, some of those that rotate only among several.
  for (const name of ['pref.example.test', 'prox.example.test', 'www.example.test', 'st.example.test']) {
    t.true((served.get(name) ?? 0) > 0.5 * asked.get(name)!, `${name}: ${served.get(name)} of ${asked.get(name)} served from the cache`);
  }
  for (const name of ['rr.example.test', 'wr.example.test', 'all.example.test'])
    t.true((served.get(name) ?? 0) > 0, `${name} is served from the cache when one endpoint is left`);
  for (const name of NOT_CACHEABLE) t.is(served.get(name) ?? 0, 0, `${name} is never cached`);
});

/**
 * `Answer.reuseClass` (the native fast path's class templates): whenever an answer says it holds
 * for its client's whole location class, every other client of that class and family gets the
 * same answer from the pipeline, with the ECS scope max(`ipv4BlocksScope`, the class block's prefix)
 * — or 0 when the answer's was 0 (a negative answer). Clients whose decision read a client subnet
 * (st.example.test inside 10.0.0.0/8) never get it; a rotating record gets it only while nothing is
 * left to rotate (the comparison then covers it like any other).
 */
test('differential: an answer reusable by class is the pipeline answer of every client of the class, with that client scope', (t) => {
  const u32 = seededUint32(2212);
  let { cached, reference } = snapshots();
  let nowMs = NOW;
  const random = new CopyableRandom(8);
  const ctx: ResolveContext = { random: random.next, now: () => nowMs, rotation: new RotationStore() };
  const names = [...CACHEABLE, ...NOT_CACHEABLE];
  const byClass = new Map<string, number>();
  let others = 0;
  for (let i = 0; i < 6000; i++) {
    if (u32() % 40 === 0) {
      const view = randomView(u32, nowMs);
      cached = withHealthView(cached, view);
      reference = withHealthView(reference, view);
    }
    nowMs += u32() % 60;
    const name = names[u32() % names.length]!;
    const client = randomClient(u32);
    const got = resolve({ name, type: TYPE_CODES.A, client, transport: 'udp' }, cached, ctx);
    const table = got.reuseClass as LocationClasses | null | undefined;
    if (table === null || table === undefined) continue;
    t.true(got.reuseScope! >= 0, `${name}: reusable by class but not by block`);
    t.is(table as unknown, cached.records.find((r) => r.name === name)!.locationClasses, `${name}: the record's own class table`);
    byClass.set(name, (byClass.get(name) ?? 0) + 1);
    const cls = unpackId(table.lookup(client.address));
    t.is(got.reuseClassId, cls);
    // Other clients of the class and family: the pipeline's answer, with their own scope.
    for (let k = 0; k < 8; k++) {
      const other = randomClient(u32);
      if (other.address.family !== client.address.family || unpackId(table.lookup(other.address)) !== cls) continue;
      others++;
      const want = resolve({ name, type: TYPE_CODES.A, client: other, transport: 'udp' }, reference, {
        random: random.copy().next,
        now: () => nowMs,
        rotation: ctx.rotation.clone(),
      });
      const scope = got.scope === 0 ? 0 : Math.max(ipv4BlocksScope(other.address), unpackPrefix(table.lookup(other.address)));
      const expected = shape(want);
      const replayed = { ...(shape(got) as Record<string, unknown>), scope };
      if (JSON.stringify(replayed) !== JSON.stringify(expected)) {
        t.deepEqual(replayed, expected, `query ${i}: ${name} for ${formatIp(client.address)} replayed to ${formatIp(other.address)}`);
        return;
      }
    }
  }
  // The subnet-reading record is class-reusable only for clients whose decision read no subnet.
  const st = { name: 'st.example.test', type: TYPE_CODES.A, transport: 'udp' as const };
  t.is(resolve({ ...st, client: { address: parseIp('10.1.2.3'), sourcePrefix: 32, fromEcs: true } }, cached, ctx).reuseClass, null);
  t.log(JSON.stringify([...byClass]));
  for (const name of ['prox.example.test', 'www.example.test']) t.true((byClass.get(name) ?? 0) > 100, `${name}: ${byClass.get(name)}`);
  t.true(others > 1000, `${others} other clients of a class compared`);
});

test('nameRrsets (PowerDNS) equals the pipeline too, and hands out the same records array while valid', (t) => {
  const { cached, reference } = snapshots();
  const u32 = seededUint32(42);
  const ctx: ResolveContext = { random: () => 0.5, now: () => NOW, rotation: new RotationStore() };
  for (let i = 0; i < 2000; i++) {
    const name = CACHEABLE[u32() % CACHEABLE.length]!;
    const client = randomClient(u32);
    const rotation = ctx.rotation.clone();
    const want = nameRrsets(reference, name, client, { ...ctx, rotation }, 'A')!.rrsets;
    const got = nameRrsets(cached, name, client, ctx, 'A')!.rrsets;
    // The selected record is each snapshot's own compiled object (with or without its cache): compared by name and type.
    const plain = (r: (typeof got)[number]) => ({ ...r, records: [...r.records], record: r.record && { name: r.record.name, type: r.record.type } });
    t.deepEqual(got.map(plain), want.map(plain));
  }
  const client = { address: parseIp('41.1.2.3'), sourcePrefix: 24, fromEcs: true };
  const first = nameRrsets(cached, 'pref.example.test', client, ctx, 'A')!.rrsets[0]!.records;
  const again = nameRrsets(cached, 'pref.example.test', { ...client, address: parseIp('41.99.0.1') }, ctx, 'A')!.rrsets[0]!.records;
  t.is(again, first, 'one Africa class: the same frozen array');
  t.true(Object.isFrozen(first) && Object.isFrozen(first[0]));
});

test('a health change shows in the very next answer: monitor views, overrides, drain and data-center status', (t) => {
  const monitor = new HealthMonitor({ log: createLogger('error') });
  const base = snapshots();
  let snap = withHealthView(base.cached, monitor.configure(config, '/nonexistent/gslbd.yaml'));
  const ctx: ResolveContext = { random: () => 0.5, now: () => NOW, rotation: new RotationStore() };
  const lusaka = { address: parseIp('41.1.2.3'), sourcePrefix: 24, fromEcs: true };
  const ask = (): { data: unknown[]; frozen: boolean; ttl: number } => {
    const a = resolve({ name: 'pref.example.test', type: TYPE_CODES.A, client: lusaka, transport: 'udp' }, snap, ctx);
    return { data: a.answers.map((r) => r.data), frozen: Object.isFrozen(a.answers[0]), ttl: a.answers[0]!.ttl };
  };
  t.deepEqual(ask().data, ['192.0.2.3'], 'Africa prefers Asia.HK');
  t.true(ask().frozen, 'the second query is served from the cache');
  snap = withHealthView(snap, monitor.setOverride('app/hk/192.0.2.3', 'force-down'));
  t.deepEqual(ask().data, ['192.0.2.4'], 'hk forced down: Europe.UK at once');
  snap = withHealthView(snap, monitor.setOverride('app/uk/192.0.2.4', 'drain'));
  const partial = ask();
  t.true(['192.0.2.1', '192.0.2.2'].includes(partial.data[0] as string), 'uk drained too: the partial matches of Asia.HK (in, jpn) share by rotation');
  t.false(partial.frozen, 'a tie split by rotation is not reused');
  snap = withHealthView(snap, monitor.setOverride('app/hk/192.0.2.3', 'none'));
  t.deepEqual(ask().data, ['192.0.2.3'], 'override cleared: hk again');
  t.true(ask().frozen);
  // A health transition published by the monitor (as a check result would), and a data center down.
  snap = withHealthView(snap, viewOf({ 'app/hk/192.0.2.3': 'down' }));
  t.deepEqual(ask().data, ['192.0.2.4']);
  snap = withHealthView(snap, viewOf({}, { hosts: { uk: 'down', hk: 'down' } }));
  const next = ask();
  t.not(next.data[0], '192.0.2.4');
  t.not(next.data[0], '192.0.2.3');
});

test('TTL while down: the very next answer after a member goes down carries downTtl', (t) => {
  let { cached } = snapshots();
  const ctx: ResolveContext = { random: () => 0.5, now: () => NOW, rotation: new RotationStore() };
  const client = { address: parseIp('5.1.2.3'), sourcePrefix: 24, fromEcs: true };
  const ttl = (): number => resolve({ name: 'prox.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, cached, ctx).answers[0]!.ttl;
  t.is(ttl(), 30);
  t.is(ttl(), 30);
  cached = withHealthView(cached, viewOf({ 'app/zmb/192.0.2.8': 'down' }));
  t.is(ttl(), 7, 'an endpoint elsewhere is down: downTtl');
  cached = withHealthView(cached, viewOf({ 'app/zmb/192.0.2.8': 'up' }));
  t.is(ttl(), 30);
});

test('a running cold-start wait is never cached: the answer changes when the wait ends, with no health change', (t) => {
  let nowMs = NOW;
  const { cached } = snapshots(viewOf({ 'app/in/192.0.2.1': 'unknown' }, { sinceMs: NOW }));
  const ctx: ResolveContext = { random: () => 0.5, now: () => nowMs, rotation: new RotationStore() };
  // Asia.IN is not in Europe: rule 3, [in, sd]; in is unknown and waits 400 ms while sd is up.
  const client = { address: parseIp('49.1.2.3'), sourcePrefix: 24, fromEcs: true };
  const ask = (): string => {
    const answer = resolve({ name: 'st.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, cached, ctx).answers[0]!;
    return presentData(answer.type, answer.data);
  };
  nowMs = NOW + 100;
  t.is(ask(), '192.0.2.7');
  t.is(ask(), '192.0.2.7');
  nowMs = NOW + 500;
  t.is(ask(), '192.0.2.1', 'the wait is over: in answers at once');
  t.is(ask(), '192.0.2.1');
  t.deepEqual(
    cached.records.find((r) => r.name === 'st.example.test')!.decisions.size,
    { keys: 1, answers: 1 },
    'stored only once the outcome no longer depends on time',
  );
});

test('rotating and random answers are never reused (only their ranking): round-robin still rotates, weighted-random still draws', (t) => {
  const { cached } = snapshots();
  const ctx: ResolveContext = { random: new CopyableRandom(3).next, now: () => NOW, rotation: new RotationStore() };
  const tokyo = { address: parseIp('1.2.3.4'), sourcePrefix: 24, fromEcs: true };
  const seen = (name: string, n: number): string[] => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const a = resolve({ name, type: TYPE_CODES.A, client: tokyo, transport: 'udp' }, cached, ctx);
      t.false(Object.isFrozen(a.answers[0]), `${name}: not from the cache`);
      out.push(a.answers.map((r) => presentData(r.type, r.data)).join());
    }
    return out;
  };
  // From Tokyo: hk (2 endpoints; round-robin ignores weights) then uk (3) for pickDcCount 2.
  t.deepEqual(seen('rr.example.test', 6), [
    '203.0.113.4,203.0.113.1',
    '203.0.113.5,203.0.113.2',
    '203.0.113.4,203.0.113.3',
    '203.0.113.5,203.0.113.1',
    '203.0.113.4,203.0.113.2',
    '203.0.113.5,203.0.113.3',
  ]);
  const drawn = seen('wr.example.test', 80);
  const heavy = drawn.filter((d) => d === '203.0.113.5').length;
  // Weights 1:3 over 80 draws: 60 expected; binomial sd 3.9, so 45–75 is beyond 3.8 sd.
  t.true(heavy >= 45 && heavy <= 75 && drawn.every((d) => d === '203.0.113.4' || d === '203.0.113.5'), `${heavy} of 80 heavy`);
  // Their ranking is reused (one key each), never an answer.
  t.deepEqual(cached.records.find((r) => r.name === 'rr.example.test')!.decisions.size, { keys: 1, answers: 0 });
  t.deepEqual(cached.records.find((r) => r.name === 'wr.example.test')!.decisions.size, { keys: 1, answers: 0 });
});

test('/explain always runs the pipeline and says whether the cache serves the key, or why the record is not cacheable', (t) => {
  const { cached } = snapshots();
  const ctx: ResolveContext = { random: () => 0.5, now: () => NOW, rotation: new RotationStore() };
  const client = { address: parseIp('41.1.2.3'), sourcePrefix: 24, fromEcs: true };
  const explain = (name: string): Record<string, unknown> => {
    const out: { steps: { stage: string }[] }[] = [];
    resolve({ name, type: TYPE_CODES.A, client, transport: 'udp' }, cached, ctx, out as never);
    return out[0]!.steps.find((s) => s.stage === 'decision-cache') as Record<string, unknown>;
  };
  t.like(explain('pref.example.test'), {
    cacheable: true,
    key: { subnetsInside: [] },
    served: 'no entry for this key on the current health view: the next query computes and stores it',
  });
  resolve({ name: 'pref.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, cached, ctx);
  t.like(explain('pref.example.test'), { cacheable: true, served: 'queries with this key are answered from the cache (its answer equals this trace)' });
  t.like(explain('rr.example.test'), {
    cacheable: true,
    outcome: 'answer not reused: the balance algorithm chooses among several endpoints (rotation, random draw or client input)',
  });
  resolve({ name: 'rr.example.test', type: TYPE_CODES.A, client, transport: 'udp' }, cached, ctx);
  t.like(explain('rr.example.test'), { served: 'queries with this key reuse the stored ranking and run pick, balance and fallback' });
  t.like(explain('ms.example.test'), { cacheable: false, reason: 'stage multi-source: it ranks by live metrics' });
  t.like(explain('x.w.example.test'), { cacheable: false, reason: 'a condition reads the query name, which varies under a wildcard record' });
});

test('memory stays bounded: at most MAX_DECISIONS entries per record', (t) => {
  const { cached } = snapshots();
  const ctx: ResolveContext = { random: () => 0.5, now: () => NOW, rotation: new RotationStore() };
  const u32 = seededUint32(9);
  for (let i = 0; i < 3000; i++) resolve({ name: 'st.example.test', type: TYPE_CODES.A, client: randomClient(u32), transport: 'udp' }, cached, ctx);
  const { keys } = cached.records.find((r) => r.name === 'st.example.test')!.decisions.size;
  t.true(keys > 0 && keys <= MAX_DECISIONS, `${keys} keys`);
});
