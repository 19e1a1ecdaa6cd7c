import { WILDCARD, type Qualifiers } from '../../core/location/location.js';
import type { CompiledDataCenter } from '../../core/model/topology.js';
import type { DcRanking } from '../../pipeline/selection/ranking.js';

/** How a data center's location matches one preferred location (seed 002, docs/PRODUCT.md §4). */
export type PreferredMatch = 'perfect' | 'partial' | 'no';

/**
 * Matches a data center (a GSLB service's site) against a preferred location, as seed 002 defines
 * it: *perfect* when every non-wildcard qualifier of the preferred location equals the data
 * center's (`*.UK.*.*` is matched perfectly by `*.UK.*.*` and by `Europe.UK.*.*`); *partial* when
 * only a non-empty part of them does (`Europe.EG` for `Europe.UK`); otherwise *no*. A wildcard on
 * the data center side equals only a wildcard (docs/PRODUCT.md §4): `*.UK` is partial for `Europe.UK`.
 */
export function matchPreferred(preferred: Qualifiers, dc: Qualifiers): PreferredMatch {
  let wanted = 0;
  let equal = 0;
  for (let i = 0; i < preferred.length; i++) {
    const p = preferred[i]!;
    if (p === WILDCARD) continue;
    wanted++;
    if (dc[i] === p) equal++;
  }
  if (wanted > 0 && equal === wanted) return 'perfect';
  return equal > 0 ? 'partial' : 'no';
}

/**
 * The rank groups of the preferred-locations algorithm (seed 002) over a record's data centers,
 * fixed at load time because it depends only on locations:
 * 1. for each preferred location in priority order, its perfect matches (one group each);
 * 2. then for each preferred location in priority order, its partial matches;
 * 3. then every other data center, as one group.
 * A data center sits in the first group it qualifies for. Applied to the data centers that are up
 * and picked best group first (pickDcCount 1), this is exactly the seed's walk: the first
 * preferred location with an up perfect match wins, several up matches are balanced, partial
 * matches are tried only when no perfect match is up, and "all other up services" come last.
 */
export function preferredLocationsRanking(preferred: readonly Qualifiers[], dcs: readonly CompiledDataCenter[]): DcRanking {
  const n = preferred.length;
  const groupOf = new Int16Array(dcs.length).fill(-1);
  for (const dc of dcs) {
    let group = 2 * n;
    for (let i = 0; i < n && group === 2 * n; i++) if (matchPreferred(preferred[i]!, dc.qualifiers) === 'perfect') group = i;
    for (let i = 0; i < n && group === 2 * n; i++) if (matchPreferred(preferred[i]!, dc.qualifiers) === 'partial') group = n + i;
    groupOf[dc.index] = group;
  }
  return { groupOf, groupCount: 2 * n + 1 };
}
