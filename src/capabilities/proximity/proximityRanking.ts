import { distanceKm, WILDCARD, type Location, type Qualifiers } from '../../core/location/location.js';
import type { DcRanking } from '../../pipeline/selection/ranking.js';
import type { CompiledDataCenter } from '../../core/model/topology.js';

/**
 * The canonical static-proximity order of data centers for a known client location (docs/PRODUCT.md §4;
 * Citrix ADC static proximity), rules 1–4 of `stages/staticProximity.ts`:
 *
 * 1. A data center's location is a pattern. Walking the six qualifiers from the continent, a
 *    concrete qualifier equal to the client's counts one *shared* qualifier, a wildcard agrees
 *    with anything (known or unknown) without counting, and the first concrete qualifier that
 *    differs from the client's ends the walk. More shared qualifiers rank higher.
 * 2. Among equals, a data center whose walk was never ended (its pattern *matches* the client; a
 *    data center with no qualifiers always does) ranks above one that contradicts the client.
 * 3. Then the nearer by great-circle distance, rounded to whole km, ranks higher; a data center
 *    or client without coordinates is at +∞.
 * 4. Remaining ties form one rank group (the pick stage spreads them), in configuration order.
 *
 * The order depends on each data center alone, so ranking a subset (the live ones) gives the
 * same order as ranking all and dropping the others.
 */
export function proximityRanking(client: Location, dcs: readonly CompiledDataCenter[]): DcRanking {
  const scored = dcs.map((dc) => ({ dc, p: proximity(client, dc) }));
  scored.sort((a, b) => compareProximity(a.p, b.p));
  let size = 0;
  for (const dc of dcs) if (dc.index >= size) size = dc.index + 1;
  const groupOf = new Int16Array(size).fill(-1);
  let group = -1;
  for (let i = 0; i < scored.length; i++) {
    if (i === 0 || compareProximity(scored[i - 1]!.p, scored[i]!.p) !== 0) group++;
    groupOf[scored[i]!.dc.index] = group;
  }
  return { groupOf, groupCount: group + 1 };
}

/** How close a data center is to a client under the rules above. */
export interface Proximity {
  /** Leading qualifiers shared (rule 1). */
  readonly shared: number;
  /** The data center's pattern matches the client's location (rule 2). */
  readonly matches: boolean;
  /** Whole km, or +∞ without coordinates (rule 3). */
  readonly km: number;
}

/** The proximity of a data center to a known client location. */
export function proximity(client: Location, dc: CompiledDataCenter): Proximity {
  const { shared, matches } = sharedLeading(client.qualifiers, dc.qualifiers);
  return { shared, matches, km: distanceTo(client, dc) };
}

/** Orders proximities best first; 0 means tied (one rank group). */
export function compareProximity(a: Proximity, b: Proximity): number {
  return b.shared - a.shared || Number(b.matches) - Number(a.matches) || a.km - b.km || 0;
}

/**
 * Leading qualifiers a data center shares with the client (rule 1) and whether its pattern
 * matches the client at all (rule 2).
 */
export function sharedLeading(client: Qualifiers, dc: Qualifiers): { shared: number; matches: boolean } {
  let shared = 0;
  for (let i = 0; i < client.length; i++) {
    const d = dc[i]!;
    if (d === WILDCARD) continue;
    if (d !== client[i]) return { shared, matches: false };
    shared++;
  }
  return { shared, matches: true };
}

/** Rules 1 and 2 as one number, higher is better: `2 × shared + (matches ? 1 : 0)`, without allocating. */
export function sharedScore(client: Qualifiers, dc: Qualifiers): number {
  let shared = 0;
  for (let i = 0; i < client.length; i++) {
    const d = dc[i]!;
    if (d === WILDCARD) continue;
    if (d !== client[i]) return shared * 2;
    shared++;
  }
  return shared * 2 + 1;
}

/** Whole km from the client to the DC, or +∞ when either has no coordinates (ranks after those that have). */
export function distanceTo(client: Location, dc: CompiledDataCenter): number {
  if (client.lat === undefined || client.lon === undefined || dc.lat === undefined || dc.lon === undefined) return Infinity;
  return Math.round(distanceKm(client.lat, client.lon, dc.lat, dc.lon));
}
