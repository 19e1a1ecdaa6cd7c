import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SubTierResolver } from './subTierResolver.js';
import type { IndexCounts } from './proximityIndex.js';
import type { ProximityDatabase } from './proximityDatabase.js';
import type { ZoneIndexCache } from './zoneIndexCache.js';
import type { SubTierHealth } from './subTierHealth.js';

/**
 * Registers the network-proximity metrics, read at scrape time (no client address in a label):
 * `gslbd_proximity_pdb_entries`, `gslbd_proximity_pdb_results_total{result}` (ingested, ignored),
 * `gslbd_proximity_index_cache_entries`, `gslbd_proximity_index_lookups_total{source}` (cache,
 * pdb_measured, pdb_fallback, round_robin). The probe queue's depth is the agents capability's
 * `gslbd_agent_probe_queue_length`. Recursive delegation: `gslbd_proximity_delegations_total{result}`
 * (answered, cached, failed, refused) and `gslbd_proximity_delegation_seconds` (each delegation
 * that asked a sub-tier, until its answer or the end of its budget). The keepalive of delegated
 * zones: `gslbd_proximity_subtier_up{zone}` (1 up, 0 down, −1 not checked yet, which counts as up;
 * zone ids are the configuration's, so the labels are bounded).
 */
export function registerProximityMetrics(
  registry: Registry,
  pdb: ProximityDatabase,
  cache: ZoneIndexCache,
  counts: IndexCounts,
  resolver: SubTierResolver,
  subTiers: SubTierHealth,
): void {
  new Gauge({
    name: 'gslbd_proximity_subtier_up',
    help: 'Keepalive of each delegated proximity zone: 1 when one of its name servers answered the last check, 0 when none did, -1 before the first check (counted as up)',
    labelNames: ['zone'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [zone, state] of subTiers.states()) this.set({ zone }, state === 'up' ? 1 : state === 'down' ? 0 : -1);
    },
  });
  const seenDelegations: Record<string, number> = {};
  new Counter({
    name: 'gslbd_proximity_delegations_total',
    help: 'Recursive delegations to sub-tier name servers by result: answered, cached, failed (the next zone answered), refused (loop protection)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      for (const [result, n] of Object.entries(resolver.counts)) {
        if (n > (seenDelegations[result] ?? 0)) this.inc({ result }, n - (seenDelegations[result] ?? 0));
        seenDelegations[result] = n;
      }
    },
  });
  new Histogram({
    name: 'gslbd_proximity_delegation_seconds',
    help: 'Time a recursive delegation spent asking sub-tier name servers (until an answer, or the end of its budget)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 1],
    registers: [registry],
    collect() {
      for (const s of resolver.latencies.splice(0)) this.observe(s);
    },
  });
  new Gauge({
    name: 'gslbd_proximity_pdb_entries',
    help: 'Client networks held by the proximity database',
    registers: [registry],
    collect() {
      this.set(pdb.size);
    },
  });
  new Gauge({
    name: 'gslbd_proximity_index_cache_entries',
    help: 'Client networks in the ordered zone index cache',
    registers: [registry],
    collect() {
      this.set(cache.size);
    },
  });
  const seenResults: Record<string, number> = {};
  new Counter({
    name: 'gslbd_proximity_pdb_results_total',
    help: 'Probe results taken into the proximity database (ingested) or not (ignored: no reply, or a group of no proximity zone)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      for (const [result, n] of Object.entries(pdb.counts)) {
        if (n > (seenResults[result] ?? 0)) this.inc({ result }, n - (seenResults[result] ?? 0));
        seenResults[result] = n;
      }
    },
  });
  const seen: Record<string, number> = {};
  new Counter({
    name: 'gslbd_proximity_index_lookups_total',
    help: 'Ordered zone index lookups by source: the cache, the PDB (measured or fallback order), round-robin (PDB unavailable)',
    labelNames: ['source'] as const,
    registers: [registry],
    collect() {
      for (const [source, n] of Object.entries(counts)) {
        if (n > (seen[source] ?? 0)) this.inc({ source }, n - (seen[source] ?? 0));
        seen[source] = n;
      }
    },
  });
}
