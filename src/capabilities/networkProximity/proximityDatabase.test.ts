import test from 'ava';
import type { StoredProbeResult } from '../../core/contracts/probeResultsMap.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { ProximityDatabase, type PdbSettings } from './proximityDatabase.js';
import { ProximityIndex, type IndexCounts } from './proximityIndex.js';
import { ZoneIndexCache } from './zoneIndexCache.js';
import { orderZones, ZoneTree } from './zoneTree.js';
import type { Client } from '../../core/model/query.js';
import { formatIp } from '../../core/net/ipAddress.js';
import { UNKNOWN_LOCATION, type Location } from '../../core/location/location.js';
import type { LocationDb } from '../../core/location/locationDb.js';

const TREE = new ZoneTree(['0', '0.1', '0.2', '1'], ['1']);

function settings(over: Partial<PdbSettings> = {}): PdbSettings {
  return {
    tree: TREE,
    groupZones: new Map([
      ['zone:0.1', '0.1'],
      ['zone:0.2', '0.2'],
      ['zone:1', '1'],
      ['dc:east', '0.1'],
    ]),
    tolerance: { ms: 5, percent: 0 },
    samples: 3,
    sampleMaxAgeMs: 60_000,
    maxNetworks: 1000,
    ipv4Prefix: 24,
    ipv6Prefix: 56,
    ...over,
  };
}

/** The PDB key of the /24 of `address`. */
function key(address: string): number | string {
  const probe = new ProximityDatabase();
  probe.configure(settings());
  return probe.keyOf(parseIp(address));
}

function result(group: string, target: string, rttMs: number | undefined, atMs: number): StoredProbeResult {
  return {
    target,
    method: 'icmp',
    sent: 3,
    received: rttMs === undefined ? 0 : 3,
    ...(rttMs === undefined ? {} : { rttMinMs: rttMs, rttMedianMs: rttMs }),
    agent: group,
    group,
    network: `${target}/24`,
    lossPercent: rttMs === undefined ? 100 : 0,
    atMs,
  };
}

test('the ordered zone index: a zone takes the minimum over its subtree; a tolerance band ties near-equal zones, broken by configuration order; unmeasured zones follow in fallback order', (t) => {
  const own = new Map([
    ['0.2', 42],
    ['0.1', 40],
    ['1', 120],
  ]);
  t.deepEqual(orderZones(TREE, own, { ms: 5, percent: 0 }).order, ['0', '0.1', '0.2', '1'], '0.1 and 0.2 are within 5 ms: configuration order');
  t.deepEqual(orderZones(TREE, own, { ms: 1, percent: 0 }).order, ['0', '0.1', '0.2', '1']);
  t.deepEqual(
    orderZones(
      TREE,
      new Map([
        ['0.2', 30],
        ['0.1', 40],
      ]),
      { ms: 1, percent: 0 },
    ).order,
    ['0', '0.2', '0.1', '1'],
    'Europe unmeasured: after the measured zones',
  );
  t.deepEqual(
    orderZones(
      TREE,
      new Map([
        ['1', 10],
        ['0.1', 12],
      ]),
      { ms: 0, percent: 25 },
    ).order,
    ['0', '0.1', '1', '0.2'],
    '25 % of 10 ms ties 12 ms',
  );
  t.deepEqual(
    [...orderZones(TREE, own, { ms: 0, percent: 0 }).rtts],
    [
      ['0.2', 42],
      ['0', 40],
      ['0.1', 40],
      ['1', 120],
    ],
  );
  t.deepEqual(TREE.fallbackOrder, ['1', '0', '0.1', '0.2']);
});

test("the PDB keeps the median of recent samples per group, the minimum over a zone's groups, and expires them", (t) => {
  const pdb = new ProximityDatabase();
  pdb.configure(settings());
  const net = key('198.51.100.0');
  pdb.ingest(result('zone:0.1', '198.51.100.0', 50, 1000));
  pdb.ingest(result('zone:0.1', '198.51.100.0', 10, 2000));
  pdb.ingest(result('zone:0.1', '198.51.100.0', 30, 3000));
  pdb.ingest(result('zone:0.1', '198.51.100.0', 30, 3000)); // the same result again: one sample
  pdb.ingest(result('zone:1', '198.51.100.0', 20, 3000));
  t.deepEqual(pdb.samplesOf(net, 'zone:0.1'), [50, 10, 30]);
  const a = pdb.lookup(net, 4000)!;
  t.deepEqual(a.order, ['1', '0', '0.1', '0.2'], 'median 30 for 0.1, 20 for Europe');
  t.like(
    a.rtts.find((r) => r.zone === '0.1'),
    { rttMs: 30, ageMs: 1000 },
  );
  pdb.ingest(result('dc:east', '198.51.100.9', 5, 3500));
  t.deepEqual(pdb.lookup(net, 4000)!.order, ['0', '0.1', '1', '0.2'], "a data center's agents measure for its zone; the zone takes the minimum of its groups");
  pdb.ingest(result('zone:0.2', '198.51.100.0', undefined, 3600));
  pdb.ingest(result('zone:9', '198.51.100.0', 1, 3600));
  t.deepEqual(pdb.counts, { ingested: 5, ignored: 2 }, 'no reply, or a group of no configured zone: ignored');
  t.is(pdb.lookup(key('203.0.113.0'), 4000), undefined);
  t.is(pdb.lookup(net, 3500 + 60_001), undefined, 'every sample older than sampleMaxAge: unmeasured again');
  t.is(pdb.sweep(3500 + 60_001), 1);
  t.is(pdb.size, 0);
});

test('the PDB is bounded: beyond maxNetworks the least recently updated network goes first', (t) => {
  const pdb = new ProximityDatabase();
  pdb.configure(settings({ maxNetworks: 2 }));
  pdb.ingest(result('zone:1', '10.0.1.0', 10, 1));
  pdb.ingest(result('zone:1', '10.0.2.0', 10, 2));
  pdb.ingest(result('zone:1', '10.0.1.0', 12, 3));
  pdb.ingest(result('zone:1', '10.0.3.0', 10, 4));
  t.is(pdb.size, 2);
  t.truthy(pdb.lookup(key('10.0.1.0'), 5));
  t.is(pdb.lookup(key('10.0.2.0'), 5), undefined);
});

function client(address: string, ecs?: { address: string; prefix: number }): Client {
  return ecs === undefined
    ? { address: parseIp(address), sourcePrefix: 32, fromEcs: false }
    : { address: parseIp(ecs.address), sourcePrefix: ecs.prefix, fromEcs: true, resolver: parseIp(address) };
}

function indexOf(over: { pdbAvailable?: boolean; ecs?: boolean; anycast?: string[]; tree?: ZoneTree } = {}) {
  const pdb = new ProximityDatabase();
  pdb.configure(settings());
  const counts: IndexCounts = { cache: 0, pdb_measured: 0, pdb_fallback: 0, round_robin: 0 };
  const cache = new ZoneIndexCache(1000, 100);
  const index = new ProximityIndex(
    {
      tree: over.tree ?? TREE,
      pdbAvailable: over.pdbAvailable ?? true,
      ecs: over.ecs ?? false,
      nameServers: new Map(),
      ipv4Prefix: 24,
      ipv6Prefix: 56,
      anycastResolvers: (over.anycast ?? []).map((c) => ({ address: parseIp(c.split('/')[0]!), prefix: Number(c.split('/')[1]) })),
    },
    pdb,
    cache,
    counts,
  );
  const noted: string[] = [];
  const probes = { note: (c: Client) => void noted.push(`${c.fromEcs ? 'ecs' : 'resolver'}`) };
  return { pdb, index, counts, noted, probes };
}

test('step 5: the cache first, else the PDB at once (fallback order and a probe request for an unmeasured network), else round-robin', (t) => {
  const { pdb, index, counts, noted, probes } = indexOf();
  const c = client('198.51.100.7');
  const first = index.zoneIndex(c, 1000, probes, true);
  t.like(first, { source: 'pdb', measured: false, network: '198.51.100.0/24', clientPrefix: 24 });
  t.deepEqual(first.order, ['1', '0', '0.1', '0.2']);
  t.deepEqual(noted, ['resolver'], 'answer now, probe later');
  pdb.ingest(result('zone:0.2', '198.51.100.0', 8, 1100));
  t.like(index.zoneIndex(c, 1500, probes, true), { source: 'cache', measured: false }, 'within the TTL the cached index stands');
  const measured = index.zoneIndex(c, 2001, probes, true);
  t.like(measured, { source: 'pdb', measured: true });
  t.deepEqual(measured.order.slice(0, 2), ['0', '0.2']);
  t.deepEqual(counts, { cache: 1, pdb_measured: 1, pdb_fallback: 1, round_robin: 0 });
  t.like(index.zoneIndex(client('198.51.100.99'), 2002, probes, false), { source: 'cache' }, '/explain reads the cache without counting');
  t.is(counts.cache, 1);

  const off = indexOf({ pdbAvailable: false });
  t.like(off.index.zoneIndex(c, 1000, off.probes, true), { source: 'round-robin', order: [] });
  t.deepEqual(off.noted, [], 'no PDB, no probe request');
});

test('the PDB key: the resolver by default (ECS answers do not vary with the ECS client), the ECS network with ecs: true, and for anycast resolvers the ECS network or the fallback', (t) => {
  const { index, probes } = indexOf({ anycast: ['8.8.8.0/24'] });
  t.like(index.zoneIndex(client('192.0.2.53', { address: '198.51.100.0', prefix: 24 }), 1, probes, true), { network: '192.0.2.0/24', clientPrefix: undefined });
  t.like(index.zoneIndex(client('8.8.8.8', { address: '198.51.100.0', prefix: 20 }), 1, probes, true), { network: '198.51.96.0/20', clientPrefix: 20 });
  const anycastAlone = indexOf({ anycast: ['8.8.8.8/32'] });
  t.like(
    anycastAlone.index.zoneIndex(client('8.8.8.8'), 1, anycastAlone.probes, true),
    { measured: false, clientPrefix: 32 },
    'an anycast /32 inside the /24 narrows the scope',
  );
  t.deepEqual(anycastAlone.noted, [], 'an anycast resolver is never probed');
  const ecs = indexOf({ ecs: true });
  t.like(ecs.index.zoneIndex(client('192.0.2.53', { address: '2001:db8:1:2::', prefix: 64 }), 1, ecs.probes, true), {
    network: '2001:db8:1::/56',
    clientPrefix: 56,
  });
});

test('the PDB holds no object per network: 4 groups × 3 samples take under 150 bytes of typed arrays per network', (t) => {
  const pdb = new ProximityDatabase();
  pdb.configure(settings({ maxNetworks: 100_000 }));
  const n = 16_384; // the arrays grow by doubling: a power of two fills them
  for (let i = 0; i < n; i++) {
    const target = `10.${i >> 8}.${i & 255}.0`;
    for (const g of ['zone:0.1', 'zone:0.2', 'zone:1', 'dc:east']) for (let s = 0; s < 3; s++) pdb.ingest(result(g, target, 10 + s, 1000 + s));
  }
  t.is(pdb.size, n);
  t.true(pdb.arrayBytes / n < 150, `${(pdb.arrayBytes / n).toFixed(0)} bytes per network`);
  t.deepEqual(pdb.samplesOf(key('10.0.7.0'), 'dc:east'), [10, 11, 12]);
  t.deepEqual(pdb.lookup(key('10.0.7.0'), 2000)!.order.slice(0, 2), ['0', '0.1'], 'the data center group of 0.1 ties with zone 0.1: configuration order');
});

test('the index cache: a hit marks its entry, so the bound drops an entry not used since it was cached (second chance); orders are interned', (t) => {
  const cache = new ZoneIndexCache(1000, 2);
  const a = cache.set(1, ['0', '1'], true, 0);
  t.is(cache.set(2, ['0', '1'], false, 0), a, 'the same order: one interned array');
  t.true(cache.get(1, 10, true) >= 0);
  cache.set(3, ['1', '0'], true, 10);
  t.true(cache.get(1, 20, true) >= 0, 'used since cached: kept');
  t.is(cache.get(2, 20, true), -1, 'not used: dropped first');
  const slot = cache.get(3, 20, true);
  t.deepEqual([cache.orderAt(slot), cache.measuredAt(slot)], [['1', '0'], true]);
  t.is(cache.get(3, 1010, true), -1, 'expired after the TTL');
  t.deepEqual([cache.hits, cache.misses], [3, 2]);
});

/** A location database of two networks: 198.51.100.0/24 in Boston, 203.0.113.0/24 in Paris; 192.0.2.0/24 known without coordinates; the rest unknown. */
const GEO: LocationDb = {
  lookup: (a) => {
    const text = formatIp(a);
    return (text.startsWith('198.51.100.') ? 1 : text.startsWith('203.0.113.') ? 2 : text.startsWith('192.0.2.') ? 3 : 0) * 256 + 24;
  },
  location: (id) =>
    [
      UNKNOWN_LOCATION,
      { qualifiers: ['NA', 'US', '', '', 'Boston', ''], lat: 42.36, lon: -71.06 },
      { qualifiers: ['EU', 'FR', '', '', 'Paris', ''], lat: 48.86, lon: 2.35 },
      { qualifiers: ['NA', 'US', '', '', '', ''] },
    ][id] as Location,
  implementation: 'typescript',
  describe: () => ({}) as ReturnType<LocationDb['describe']>,
};

test('the fallback order for an unmeasured network: static proximity from its location (nearest zone first, zones without coordinates after in default order), else the default order', (t) => {
  // East Coast at New York, West Coast at San Francisco (data centers' coordinates), Europe at Frankfurt; zone 0 stands where its sub-zones do.
  const tree = new ZoneTree(
    ['0', '0.1', '0.2', '1', '2'],
    ['1'],
    [
      { zone: '0.1', lat: 40.71, lon: -74.01 },
      { zone: '0.2', lat: 37.77, lon: -122.42 },
      { zone: '1', lat: 50.11, lon: 8.68 },
    ],
  );
  const { index, pdb, probes, noted } = indexOf({ tree });
  const boston = index.zoneIndex(client('198.51.100.7'), 1000, probes, true, GEO);
  t.like(boston, { source: 'pdb', measured: false, fallback: 'static-proximity' });
  t.deepEqual(
    boston.order,
    ['0', '0.1', '0.2', '1', '2'],
    'Boston: the East Coast (and its parent) first, then the West Coast, Europe; zone 2 has no coordinates',
  );
  t.deepEqual(index.zoneIndex(client('203.0.113.9'), 1000, probes, true, GEO).order, ['1', '0', '0.1', '0.2', '2'], 'Paris: Europe first');
  t.deepEqual(noted.length, 2, 'answer now, probe later: a probe request either way');
  // No coordinates for the network's location, an unknown location, or no location database: the default order.
  const fresh = indexOf({ tree }).index;
  for (const [address, geo] of [
    ['192.0.2.1', GEO],
    ['100.64.0.1', GEO],
    ['198.51.100.7', undefined],
  ] as const) {
    const r = fresh.zoneIndex(client(address), 1000, probes, false, geo);
    t.like(r, { fallback: 'default-order' }, address);
    t.deepEqual(r.order, ['1', '0', '0.1', '0.2', '2'], address);
  }
  // A measured network keeps its measured order.
  pdb.ingest(result('zone:0.2', '198.51.101.0', 8, 1100));
  const measured = index.zoneIndex(client('198.51.101.7'), 2000, probes, true, GEO);
  t.like(measured, { measured: true });
  t.is(measured.fallback, undefined);
  // Without coordinates anywhere the tree never asks the location database.
  t.false(TREE.located);
});

test('lookup over typed arrays equals orderZones over each zone’s median of fresh samples (random networks, groups, ages, tolerances)', (t) => {
  const tree = new ZoneTree(['0', '0.1', '0.2', '1', '1.1', '2'], ['2', '1']);
  const groups: [string, string][] = [
    ['zone:0.1', '0.1'],
    ['zone:0.2', '0.2'],
    ['zone:1', '1'],
    ['zone:1.1', '1.1'],
    ['zone:2', '2'],
    ['dc:east', '0.1'],
    ['dc:gone', '9'],
  ];
  let seed = 77;
  const u32 = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  for (const tolerance of [
    { ms: 0, percent: 0 },
    { ms: 5, percent: 0 },
    { ms: 0, percent: 20 },
  ]) {
    for (const samples of [1, 3, 4]) {
      const pdb = new ProximityDatabase();
      const now = 10_000_000;
      pdb.configure(settings({ tree, groupZones: new Map(groups), tolerance, samples }));
      for (let n = 0; n < 150; n++) {
        const target = `10.${n >> 8}.${n & 255}.1`;
        // Per group, the samples kept (the last `samples`) with their times; the reference reads the fresh ones.
        const kept = new Map<string, [number, number][]>();
        for (let r = 0; r < 1 + (u32() % 12); r++) {
          const [group] = groups[u32() % groups.length]!;
          const rtt = 5 + (u32() % 60) + (u32() % 4) / 4;
          const at = now - (u32() % 90_000) + r;
          pdb.ingest(result(group, target, rtt, at));
          const list = kept.get(group) ?? [];
          if (list.length > 0 && list[list.length - 1]![1] === at) continue;
          list.push([rtt, at]);
          kept.set(group, list.slice(-samples));
        }
        const own = new Map<string, number>();
        for (const [group, list] of kept) {
          const zone = new Map(groups).get(group)!;
          if (!tree.has(zone)) continue;
          const fresh = list.filter(([, at]) => now - at <= 60_000).map(([v]) => Math.fround(v));
          if (fresh.length === 0) continue;
          fresh.sort((a, b) => a - b);
          const mid = fresh.length >> 1;
          const m = Math.round((fresh.length % 2 === 1 ? fresh[mid]! : (fresh[mid - 1]! + fresh[mid]!) / 2) * 1000) / 1000;
          own.set(zone, Math.min(own.get(zone) ?? Infinity, m));
        }
        const got = pdb.lookup(pdb.keyOf(parseIp(target)), now);
        const newestUpdate = Math.max(...[...kept.values()].flat().map(([, at]) => at));
        if (own.size === 0 || now - newestUpdate > 60_000) {
          if (now - newestUpdate > 60_000 || own.size === 0) t.is(got, undefined, `${target}: nothing fresh`);
          continue;
        }
        const want = orderZones(tree, own, tolerance);
        t.deepEqual(got?.order, want.order, `${target} ${JSON.stringify(tolerance)} samples ${samples}`);
        const byZone = (a: [string, number], b: [string, number]): number => (a[0] < b[0] ? -1 : 1);
        t.deepEqual(got?.rtts.map((r): [string, number] => [r.zone, r.rttMs]).sort(byZone), [...want.rtts].sort(byZone), `${target}: RTT per zone`);
      }
    }
  }
});
