import type { Client } from '../model/query.js';
import type { ProbeDemand } from './probeDemand.js';

/**
 * Where a query's ordered zone index came from (docs/PRODUCT.md §5, the seed's step 5 a–c):
 * - `cache`: the engine's ordered zone index cache (step 5a);
 * - `pdb`: the proximity database, answering at once (step 5b) — measured, or its fallback order
 *   for a network it has no measurements of (a probe request is then queued);
 * - `round-robin`: the PDB is unavailable (step 5c); the stage ranks every live data center alike.
 */
export type ZoneIndexSource = 'cache' | 'pdb' | 'round-robin';

/** One proximity zone's round-trip time toward a client network, as the index was derived from it. */
export interface ZoneRtt {
  readonly zone: string;
  /** The zone's RTT (ms): the minimum over its own and its descendants' median probe RTTs. */
  readonly rttMs: number;
  /** Age of the newest sample behind it (ms, engine receive time) when the index was derived. */
  readonly ageMs: number;
}

/** The ordered zone index one query reads. */
export interface ZoneIndexReading {
  readonly source: ZoneIndexSource;
  /** True when the order comes from measurements; false for the fallback order and for round-robin. */
  readonly measured: boolean;
  /** Zone ids, best first (empty for round-robin). */
  readonly order: readonly string[];
  /** The client network the index is kept for (`198.51.100.0/24`); empty for round-robin without a network. */
  readonly network: string;
  /**
   * The prefix length of `network` when it was derived from the client's address (the ECS address,
   * or the resolver's without ECS): the decision is then constant over that block, the ECS scope's
   * bound (docs/PRODUCT.md §8). Undefined when it was derived from the resolver behind an ECS
   * query (the answer does not vary with the ECS client) or when nothing was read.
   */
  readonly clientPrefix: number | undefined;
  /** RTT per measured zone (empty when not measured). */
  readonly rtts: readonly ZoneRtt[];
}

/**
 * The network-proximity state the query path reads (`src/capabilities/networkProximity/`): the
 * ordered zone index for a client, from the engine's cache, else from the proximity database —
 * which answers at once and queues a probe request for a network it has no measurements of
 * (answer now, probe later) — else round-robin when the database is unavailable.
 */
export interface ProximityView {
  /**
   * The ordered zone index for `client` at `nowMs` (ms since the epoch). Never throws, never waits.
   * With `record` true (a query) it fills the index cache and notes the network in `probes`; with
   * false (`/explain`) it only reads.
   */
  zoneIndex(client: Client, nowMs: number, probes: ProbeDemand | undefined, record: boolean): ZoneIndexReading;
  /** False when the zone is delegated to a sub-tier whose name servers all failed their keepalive check (the zone is then no candidate). */
  zoneUp(zone: string): boolean;
}
