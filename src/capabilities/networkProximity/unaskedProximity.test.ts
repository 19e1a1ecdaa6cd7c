import test from 'ava';
import type { StoredProbeResult } from '../../core/contracts/probeResultsMap.js';
import { TYPE_CODES } from '../../core/dns/records.js';
import type { Answer, Client, Query } from '../../core/model/query.js';
import type { QueryEngine } from '../../core/contracts/frontDoor.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import { RotationStore } from '../../core/views/rotationStore.js';
import { Engine } from '../../pipeline/engine.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { clientOf } from '../../../test/support/selectionFixture.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { ProximityDatabase } from './proximityDatabase.js';
import { ProximityIndex } from './proximityIndex.js';
import { ZoneIndexCache } from './zoneIndexCache.js';
import { ZoneTree } from './zoneTree.js';

/**
 * Answers nobody asked (`Engine.unasked`: the fast path re-answering its templates at publish)
 * leave network proximity's state as it is (`ResolveContext.unasked`): the ordered zone index
 * cache gets no entry, no hit or miss and no use mark, the index's counters stay, and no client
 * is noted for the agents' probes — both on the decision cache's keyed read and on the stage's own
 * lookup. The same queries asked for real change each of them.
 */

const NOW = 1_700_000_000_000;
const ZONES = ['1', '2'] as const;

const config = parseConfigText(`
zones:
  - name: work.test
    soa: { mname: ns1.work.test, rname: hostmaster.work.test }
    ns: [ns1.work.test]
networkProximity:
  zones:
    - { id: "1", name: Europe }
    - { id: "2", name: Asia }
datacenters:
  - { name: eu, proximityZone: "1" }
  - { name: asia, proximityZone: "2" }
services:
  - name: web
    endpoints:
      - { dc: eu, address: 192.0.2.3 }
      - { dc: asia, address: 192.0.2.4 }
records:
  - { name: www.work.test, type: A, ttl: 5, service: web, policy: { type: network-proximity } }
`);

function setup(): { engine: Engine; cache: ZoneIndexCache; counts: Record<string, number>; notes: Client[] } {
  const tree = new ZoneTree(['1', '2'], ['1']);
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
  // 10.0.0.0/24 measured nearest to Asia.
  for (const [zone, rtt] of [
    ['1', 50],
    ['2', 10],
  ] as const) {
    const r: StoredProbeResult = {
      target: '10.0.0.0',
      method: 'dns',
      sent: 3,
      received: 3,
      rttMinMs: rtt,
      rttMedianMs: rtt,
      agent: `zone:${zone}`,
      group: `zone:${zone}`,
      network: '10.0.0.0/24',
      lossPercent: 0,
      atMs: NOW,
    };
    pdb.ingest(r);
  }
  const settings = { tree, pdbAvailable: true, ecs: false, ipv4Prefix: 24, ipv6Prefix: 56, anycastResolvers: [], nameServers: new Map() };
  const cache = new ZoneIndexCache(60_000, 10_000);
  const counts = { cache: 0, pdb_measured: 0, pdb_fallback: 0, round_robin: 0 };
  const proximity = new ProximityIndex(settings, pdb, cache, counts);
  // Who notes a client for the agents is what is checked: a recorder of ProbeDemand.note.
  const notes: Client[] = [];
  const probes = { note: (client: Client) => void notes.push(client) };
  const state = { geo: prefixLocationDb([]), health: allUpHealthView, metrics: emptyMetricView, proximity, probes };
  const engine = new Engine(
    buildSnapshot('<test>', config, state, NOW),
    { random: () => 0.5, now: () => NOW, rotation: new RotationStore() },
    createLogger('silent'),
  );
  return { engine, cache, counts, notes };
}

const QUERY: Query = { name: 'www.work.test', type: TYPE_CODES.A, client: clientOf('10.0.0.7'), transport: 'udp', dnssecOk: false, delegationHop: undefined };

function answerOf(e: QueryEngine): Answer {
  const a = e.resolve(QUERY);
  if (a instanceof Promise) throw new Error('no sub-tier in this configuration');
  return a;
}

/** What a query may change: the cache's entries, hits and misses, the index's counters, the probe notes. */
function stateOf(s: ReturnType<typeof setup>): unknown {
  return { entries: s.cache.size, hits: s.cache.hits, misses: s.cache.misses, counts: { ...s.counts }, notes: s.notes.length };
}

test('unasked answers leave the zone index cache, its counters and the probe demand as they are', (t) => {
  const s = setup();
  const start = stateOf(s);
  // Not cached yet: the stage's own lookup (PDB), which a query would store and note.
  const first = answerOf(s.engine.unasked());
  t.deepEqual(first.dcs, ['asia']);
  t.deepEqual(stateOf(s), start);
  const asked = answerOf(s.engine);
  t.deepEqual(asked.dcs, ['asia']);
  const afterQuery = stateOf(s);
  t.notDeepEqual(afterQuery, start);
  t.is(s.notes.length, 1);
  t.is(s.cache.size, 1);
  // Cached now: the decision cache's keyed read, which a query counts as a hit.
  for (let i = 0; i < 3; i++) t.deepEqual(answerOf(s.engine.unasked()).answers, asked.answers);
  t.deepEqual(stateOf(s), afterQuery);
  answerOf(s.engine);
  t.is(s.cache.hits, (afterQuery as { hits: number }).hits + 1);
});
