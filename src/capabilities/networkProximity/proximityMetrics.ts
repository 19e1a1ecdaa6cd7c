import { Counter, Gauge, type Registry } from 'prom-client';
import type { IndexCounts } from './proximityIndex.js';
import type { ProximityDatabase } from './proximityDatabase.js';
import type { ZoneIndexCache } from './zoneIndexCache.js';

/**
 * Registers the network-proximity metrics, read at scrape time (no client address in a label):
 * `gslbd_proximity_pdb_entries`, `gslbd_proximity_pdb_results_total{result}` (ingested, ignored),
 * `gslbd_proximity_index_cache_entries`, `gslbd_proximity_index_lookups_total{source}` (cache,
 * pdb_measured, pdb_fallback, round_robin). The probe queue's depth is the agents capability's
 * `gslbd_agent_probe_queue_length`.
 */
export function registerProximityMetrics(registry: Registry, pdb: ProximityDatabase, cache: ZoneIndexCache, counts: IndexCounts): void {
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
