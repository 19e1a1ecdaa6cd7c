import type { AnswerRecord, RecordType } from '../dns/records.js';
import type { Client, DelegationHop } from '../model/query.js';
import type { LocationDb } from '../location/locationDb.js';
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
  /**
   * For an order the PDB gave without measurements: `static-proximity` (zones by distance from the
   * client network's location) or `default-order` (`defaultOrder`, then configuration order).
   * Absent on readings from the cache and measured ones.
   */
  readonly fallback?: 'static-proximity' | 'default-order';
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
   * false (`/explain`) it only reads. `geo` locates a network the PDB has not measured, for the
   * fallback order by static proximity.
   */
  zoneIndex(client: Client, nowMs: number, probes: ProbeDemand | undefined, record: boolean, geo?: LocationDb): ZoneIndexReading;
  /**
   * The reading {@link zoneIndex} would give `client` at `nowMs` from the engine's ordered zone
   * index cache (source `cache`), or undefined when the cache has no unexpired index for the
   * client network (then only `zoneIndex` answers: the PDB or round-robin). One frozen object per
   * (interned order, measured, `clientPrefix`) while the cache keeps that order: the decision cache
   * keys reused decisions on its identity. With `count` a hit is counted as a query's lookup (a
   * miss is not: the `zoneIndex` call that follows counts it); never fills the cache.
   */
  cachedIndex(client: Client, nowMs: number, count: boolean): ZoneIndexReading | undefined;
  /** False when the zone is delegated to a sub-tier whose name servers all failed their keepalive check (the zone is then no candidate). */
  zoneUp(zone: string): boolean;
  /**
   * Recursive delegation (docs/PRODUCT.md §5, seed 000 step 6): asks the name servers of the
   * delegated zones `request.zones`, in order, for `name`/`type` on behalf of `client`, within the
   * request's budget. Never rejects.
   * With `trace` given (`/explain`) the delegation is a trial: the answer cache is read but not
   * filled, nothing is counted in the delegation metrics, and `trace` receives what happened.
   * @returns the first sub-tier's authoritative answer with records; `undefined` when none answered
   *   in time (the query keeps the local answer, the next zone's); `'refused'` when `hop` shows a
   *   loop (this engine's own id, or the hop limit reached).
   */
  delegate(
    request: DelegationRequest,
    name: string,
    type: RecordType,
    client: Client,
    hop: DelegationHop | undefined,
    trace?: DelegationTrace,
  ): Promise<DelegatedAnswer | 'refused' | undefined>;
}

/** What one recursive delegation did, for `/explain` (filled by {@link ProximityView.delegate}). */
export interface DelegationTrace {
  /** `answered` (a sub-tier answered now), `cached` (an answer kept from an earlier query), `failed` (none in time), `refused` (loop protection). */
  result: 'answered' | 'cached' | 'failed' | 'refused' | undefined;
  /** The time the delegation took (ms). */
  ms: number;
  /** Each question sent to a name server, in order. */
  readonly attempts: DelegationAttempt[];
}

/** One question to one name server of a delegated zone. */
export interface DelegationAttempt {
  readonly zone: string;
  /** `name (address:port)`. */
  readonly nameServer: string;
  /** `tcp` when the UDP reply was truncated and TCP followed. */
  readonly transport: 'udp' | 'tcp';
  /** The reply's RCODE (RFC 1035 §4.1.1), undefined when no matching reply came. */
  readonly rcode: number | undefined;
  /** `answered`, or why the attempt did not count: `no reply` (timeout or error), `not authoritative`, `rcode`, `no A, AAAA or CNAME records`. */
  readonly outcome: string;
  readonly ms: number;
}

/** What a selection asks of a sub-tier when its best candidates are delegated zones resolved recursively. */
export interface DelegationRequest {
  /** The delegated zones to ask, best first (those before the first zone with a live data center). */
  readonly zones: readonly string[];
  /** The record's TTL (s): the sub-tier's TTLs are capped by it. */
  readonly ttl: number;
  /** The time all attempts together may take (ms), below every front door's deadline. */
  readonly budgetMs: number;
  /** The time one UDP or TCP attempt to one name server may take (ms). */
  readonly attemptMs: number;
  /** The zone whose data centers answer when no sub-tier does (the first zone with a live data center after the delegated ones); undefined when none is in the index. */
  readonly fallbackZone: string | undefined;
}

/** A sub-tier's authoritative answer, as the engine returns it. */
export interface DelegatedAnswer {
  /** The delegated zone whose name server answered. */
  readonly zone: string;
  /** The answer section, TTLs capped by the record's. */
  readonly records: readonly AnswerRecord[];
  /** The sub-tier's ECS scope (capped by the prefix forwarded to it); 0 without ECS in its reply. */
  readonly scope: number;
}
