import test from 'ava';
import type { StoredProbeResult } from '../../core/contracts/probeResultsMap.js';
import { presentData } from '../../core/dns/presentation.js';
import { TYPE_CODES } from '../../core/dns/records.js';
import type { Answer, Client } from '../../core/model/query.js';
import { formatIp, parseCidr, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { allUpHealthView, type HealthStatus, type HealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import { RotationStore } from '../../core/views/rotationStore.js';
import { withHealthView, type Snapshot } from '../../pipeline/snapshot.js';
import { resolve } from '../../pipeline/zones/authoritative.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { viewOf } from '../../../test/health/gslbFixture.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { CopyableRandom, seededUint32 } from '../../../test/support/seededRandom.js';
import { ProximityDatabase } from './proximityDatabase.js';
import { ProximityIndex, type IndexSettings } from './proximityIndex.js';
import { ZoneIndexCache } from './zoneIndexCache.js';
import { ZoneTree } from './zoneTree.js';

/**
 * The decision cache's reuse of network-proximity decisions (`Stage.keyedRead`, README.md "Per
 * query") against the pipeline: the same configuration compiled with and without decision
 * caches, each with its own PDB and ordered zone index cache fed the same probe results, asked
 * the same queries at the same instants, must give the same answers, TTLs, ECS scopes and data
 * centers — across RTT swaps (the answer moves once the index TTL ends, as without the cache),
 * health flips, new networks (fallback order), anycast resolvers, ECS and not, both families,
 * and the PDB becoming unavailable (round-robin).
 */

const ZONES = ['0.1', '0.2', '1', '2'] as const;
const TTL_MS = 1000;
const NOW = 1_700_000_000_000;

const CONFIG = `
zones:
  - name: work.test
    soa: { mname: ns1.work.test, rname: hostmaster.work.test }
    ns: [ns1.work.test]
networkProximity:
  zones:
    - { id: "0", name: U.S. }
    - { id: "0.1", name: East Coast }
    - { id: "0.2", name: West Coast }
    - { id: "1", name: Europe }
    - { id: "2", name: Asia }
datacenters:
  - { name: east, proximityZone: "0.1" }
  - { name: west, proximityZone: "0.2" }
  - { name: eu, proximityZone: "1" }
  - { name: asia, proximityZone: "2" }
services:
  - name: web
    endpoints:
      - { dc: east, address: 192.0.2.1 }
      - { dc: west, address: 192.0.2.2 }
      - { dc: eu, address: 192.0.2.3 }
      - { dc: eu, address: 192.0.2.33 }
      - { dc: asia, address: 192.0.2.4 }
records:
  - { name: www.work.test, type: A, ttl: 5, service: web, policy: { type: network-proximity } }
  - { name: two.work.test, type: A, ttl: 5, service: web, policy: { type: network-proximity, pickDcCount: 2, balanceAlgorithm: all } }
  - { name: plain.work.test, type: A, ttl: 5, service: web }
`;
const config = parseConfigText(CONFIG);
const ENDPOINT_KEYS = config.services.flatMap((s) => s.endpoints.map((e) => `${s.name}/${e.dc}/${e.address}`));
const NAMES = ['www.work.test', 'two.work.test', 'plain.work.test'];
/** Networks the clients come from: resolver /24s and /56s, ECS client /24s, the anycast resolver's. */
const V4 = Array.from({ length: 40 }, (_, i) => `10.0.${i}.0/24`);
const V6 = Array.from({ length: 16 }, (_, i) => `2001:db8:0:${(i * 256).toString(16)}::/56`);
const ECS_V4 = Array.from({ length: 24 }, (_, i) => `172.16.${i}.0/24`);
const ECS_V6 = Array.from({ length: 8 }, (_, i) => `2001:db8:1:${(i * 256).toString(16)}::/56`);
const ANYCAST = '8.8.8.0/24';
/** Networks measured from the start (the others get the fallback order until a test measures them). */
const MEASURED = [...V4.slice(0, 30), ...V6.slice(0, 12), ...ECS_V4.slice(0, 16), ...ECS_V6.slice(0, 6), ANYCAST];
const ALL = [...V4, ...V6, ...ECS_V4, ...ECS_V6, ANYCAST];

/** One engine's network-proximity state: PDB, index cache and the index over them, with settings the test may flip. */
interface Side {
  readonly pdb: ProximityDatabase;
  readonly settings: { -readonly [K in keyof IndexSettings]: IndexSettings[K] };
  snapshot: Snapshot;
}

function side(ecs: boolean, reuseDecisions: boolean): Side {
  const tree = new ZoneTree(['0', '0.1', '0.2', '1', '2'], ['1']);
  const pdb = new ProximityDatabase();
  pdb.configure({
    tree,
    groupZones: new Map(ZONES.map((z) => [`zone:${z}`, z])),
    tolerance: { ms: 5, percent: 0 },
    samples: 1,
    sampleMaxAgeMs: 3_600_000,
    maxNetworks: 10_000,
    ipv4Prefix: 24,
    ipv6Prefix: 56,
  });
  const settings = { tree, pdbAvailable: true, ecs, ipv4Prefix: 24, ipv6Prefix: 56, anycastResolvers: [parseCidr(ANYCAST)], nameServers: new Map() };
  const cache = new ZoneIndexCache(TTL_MS, 10_000);
  const proximity = new ProximityIndex(settings, pdb, cache, { cache: 0, pdb_measured: 0, pdb_fallback: 0, round_robin: 0 });
  const state = { geo: prefixLocationDb([]), health: allUpHealthView, metrics: emptyMetricView, proximity };
  return { pdb, settings, snapshot: buildSnapshot('<test>', config, state, NOW, undefined, { reuseDecisions }) };
}

/** Zone `ZONES[best]` nearest to `network`, the others 20 ms apart behind it. */
function measure(sides: readonly Side[], network: string, best: number, atMs: number): void {
  const target = formatIp(parseCidr(network).address);
  for (let z = 0; z < ZONES.length; z++) {
    const rtt = 10 + ((z - best + ZONES.length) % ZONES.length) * 20;
    const group = `zone:${ZONES[z]}`;
    const r: StoredProbeResult = {
      target,
      method: 'dns',
      sent: 3,
      received: 3,
      rttMinMs: rtt,
      rttMedianMs: rtt,
      agent: group,
      group,
      network,
      lossPercent: 0,
      atMs,
    };
    for (const s of sides) s.pdb.ingest(r);
  }
}

/** An address inside `network` (host bits drawn). */
function inside(network: string, u32: () => number): IpAddress {
  const { address } = parseCidr(network);
  if (address.family === 4) return parseIp(`${formatIp(address).split('.').slice(0, 3).join('.')}.${u32() % 256}`);
  const hex = (): string => (u32() % 65536).toString(16);
  return parseIp(`${formatIp(address).replace(/::$/, '')}:${(u32() % 256).toString(16)}:${hex()}::${hex()}`);
}

function randomClient(u32: () => number): Client {
  const kind = u32() % 4;
  if (kind === 0) return { address: inside(V4[u32() % V4.length]!, u32), sourcePrefix: 32, fromEcs: false };
  if (kind === 1) return { address: inside(V6[u32() % V6.length]!, u32), sourcePrefix: 128, fromEcs: false };
  // ECS: an ECS client network behind a resolver, or the anycast resolver; source prefixes at, below and above the key length.
  const v6 = u32() % 3 === 0;
  const resolver = u32() % 4 === 0 ? parseIp(`8.8.8.${u32() % 256}`) : inside((v6 ? V6 : V4)[u32() % 8]!, u32);
  const address = inside((v6 ? ECS_V6 : ECS_V4)[u32() % (v6 ? ECS_V6.length : ECS_V4.length)]!, u32);
  const sourcePrefix = v6 ? [48, 56, 64][u32() % 3]! : [20, 24, 28][u32() % 3]!;
  return { address, sourcePrefix, fromEcs: true, resolver };
}

function randomView(u32: () => number): HealthView {
  const statuses: Record<string, HealthStatus> = {};
  for (const key of ENDPOINT_KEYS) statuses[key] = u32() % 100 < 75 ? 'up' : 'down';
  return viewOf(statuses);
}

function shape(a: Answer): unknown {
  return { rcode: a.rcode, answers: a.answers.map((r) => [r.name, r.type, r.ttl, r.data]), scope: a.scope, dcs: a.dcs };
}

for (const ecs of [false, true]) {
  test(`differential (ecs: ${ecs}): reused network-proximity decisions equal the pipeline's across RTT swaps, index expiry, health flips and the PDB going away`, (t) => {
    const u32 = seededUint32(ecs ? 2020 : 2021);
    const cached = side(ecs, true);
    const reference = side(ecs, false);
    const both = [cached, reference];
    let nowMs = NOW;
    for (const [i, n] of MEASURED.entries()) measure(both, n, i % ZONES.length, nowMs);
    const random = new CopyableRandom(11);
    const rotation = new RotationStore();
    let served = 0;
    let proximityAsked = 0;
    let roundRobinUntil = -1;
    const moved = new Set<string>();
    for (let i = 0; i < 16_000; i++) {
      nowMs += u32() % 4;
      const event = u32() % 1000;
      if (event < 20) {
        const view = randomView(u32);
        for (const s of both) s.snapshot = withHealthView(s.snapshot, view);
      } else if (event < 40) {
        // RTT swap (or a first measurement) for a few networks: the answer moves once their cached index expires.
        for (let k = 0; k < 6; k++) {
          const n = ALL[u32() % ALL.length]!;
          moved.add(n);
          measure(both, n, u32() % ZONES.length, nowMs);
        }
      } else if (event < 41 && roundRobinUntil < 0) {
        // The PDB becomes unavailable for a while (a shared store cut off): cached indexes serve until their TTL, then round-robin.
        roundRobinUntil = i + 1500;
        for (const s of both) s.settings.pdbAvailable = false;
      }
      if (i === roundRobinUntil) {
        roundRobinUntil = -1;
        for (const s of both) s.settings.pdbAvailable = true;
      }
      const name = NAMES[u32() % NAMES.length]!;
      const client = randomClient(u32);
      const q = { name, type: TYPE_CODES.A, client, transport: 'udp' as const };
      const copy = random.copy();
      const want = resolve(q, reference.snapshot, { random: copy.next, now: () => nowMs, rotation: rotation.clone() });
      const got = resolve(q, cached.snapshot, { random: random.next, now: () => nowMs, rotation });
      if (JSON.stringify(shape(got)) !== JSON.stringify(shape(want))) {
        t.deepEqual(
          shape(got),
          shape(want),
          `query ${i} at +${nowMs - NOW} ms: ${name} for ${formatIp(client.address)}/${client.sourcePrefix} via ${client.resolver ? formatIp(client.resolver) : '-'}`,
        );
        return;
      }
      if (name !== 'plain.work.test') {
        proximityAsked++;
        if (got.answers.length > 0 && Object.isFrozen(got.answers[0])) served++;
      }
    }
    t.log(`${served} of ${proximityAsked} network-proximity answers served whole from the decision cache; ${moved.size} networks re-measured`);
    t.true(moved.size > 50, `${moved.size} networks re-measured`);
    // The cache really served (whole answers; rotating ones reuse only the ranking and are not counted here).
    t.true(served > 0.3 * proximityAsked, `${served} of ${proximityAsked} network-proximity answers served from the decision cache`);
  });
}

test('an RTT swap moves the answer once the index TTL ends, exactly as without the decision cache; round-robin is never reused', (t) => {
  const cached = side(false, true);
  const reference = side(false, false);
  const both = [cached, reference];
  measure(both, '10.0.7.0/24', 0, NOW);
  const rotation = new RotationStore();
  const ask = (s: Side, nowMs: number): { answer: string; scope: number; frozen: boolean } => {
    const a = resolve(
      { name: 'www.work.test', type: TYPE_CODES.A, client: { address: parseIp('10.0.7.9'), sourcePrefix: 32, fromEcs: false }, transport: 'udp' },
      s.snapshot,
      { random: Math.random, now: () => nowMs, rotation },
    );
    return { answer: a.answers.map((r) => presentData(r.type, r.data)).join(), scope: a.scope, frozen: Object.isFrozen(a.answers[0]) };
  };
  for (const s of both) t.like(ask(s, NOW), { answer: '192.0.2.1', scope: 24 }, 'the measured nearest zone, East Coast');
  t.true(ask(cached, NOW + 10).frozen, 'served from the decision cache while the index is cached');
  measure(both, '10.0.7.0/24', 1, NOW + 100);
  for (const s of both) t.like(ask(s, NOW + TTL_MS - 1), { answer: '192.0.2.1' }, 'the cached index stands until its TTL');
  for (const s of both) t.like(ask(s, NOW + TTL_MS), { answer: '192.0.2.2', scope: 24 }, 'then the PDB’s new order: West Coast');
  t.true(ask(cached, NOW + TTL_MS + 1).frozen);
  for (const s of both) s.settings.pdbAvailable = false;
  const seen = new Set<string>();
  for (let i = 0; i < 8; i++) {
    const got = ask(cached, NOW + 3 * TTL_MS + i);
    t.false(got.frozen, 'round-robin is never a reused decision');
    t.is(got.scope, 0);
    seen.add(got.answer);
  }
  t.true(seen.size > 1, `round-robin rotates: ${[...seen].join(' ')}`);
});
