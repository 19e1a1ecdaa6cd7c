import { distanceKm, formatQualifiers, WILDCARD, type Location, type Qualifiers } from '../../geo/location.js';
import { clientLocation } from '../clientLocation.js';
import type { CompiledDataCenter, LiveDc, Stage } from '../types.js';

/**
 * `rank` by static proximity (SPEC §4; Citrix ADC static proximity). The canonical rules:
 *
 * 1. A data center's location is a pattern. Walking the six qualifiers from the continent, a
 *    concrete qualifier equal to the client's counts one *shared* qualifier, a wildcard agrees
 *    with anything (known or unknown) without counting, and the first concrete qualifier that
 *    differs from the client's ends the walk. More shared qualifiers rank higher.
 * 2. Among equals, a data center whose walk was never ended (its pattern *matches* the client; a
 *    data center with no qualifiers always does) ranks above one that contradicts the client.
 * 3. Then the nearer by great-circle distance, rounded to whole km, ranks higher; a data center
 *    or client without coordinates is at +∞.
 * 4. Remaining ties form one rank group, spread by the pick stage (rotation).
 * 5. A client whose location is unknown (no entry in the data, or an entry with no qualifier and no
 *    coordinates) is never ranked by configuration order: it gets one group of the live `default`
 *    data centers, or of every live data center when none of those is live or none is configured.
 *
 * The decision depends on the client only through its location, so the ECS scope is the prefix
 * of the client's block in the location table (including the block of "unknown").
 */
export function staticProximityStage(defaultDcs: ReadonlySet<string>): Stage {
  return {
    slot: 'rank',
    name: 'static-proximity',
    run(s) {
      if (s.live.length === 0) return;
      const { id, location } = clientLocation(s);
      if (id === 0 || isUnknown(location)) {
        const defaults = defaultDcs.size > 0 ? s.live.filter((l) => defaultDcs.has(l.candidate.dc.name)) : [];
        s.ranked = [defaults.length > 0 ? defaults : s.live];
        if (s.trace) {
          s.trace.step('static-proximity', {
            clientLocation: 'unknown',
            rule: defaults.length > 0 ? 'default data centers' : 'all live data centers',
            groups: s.ranked.map((g) => g.map((l) => l.candidate.dc.name)),
          });
        }
        return;
      }
      const scored = s.live.map((l) => ({ l, ...proximity(location, l.candidate.dc) }));
      scored.sort(compareProximity);
      const groups: LiveDc[][] = [];
      let prev: (typeof scored)[number] | undefined;
      for (const x of scored) {
        if (prev && compareProximity(prev, x) === 0) groups[groups.length - 1]!.push(x.l);
        else groups.push([x.l]);
        prev = x;
      }
      s.ranked = groups;
      if (s.trace) {
        s.trace.step('static-proximity', {
          clientLocation: formatQualifiers(location.qualifiers),
          clientCoordinates: location.lat !== undefined ? [location.lat, location.lon] : null,
          dcs: scored.map((x) => ({ dc: x.l.candidate.dc.name, sharedQualifiers: x.shared, matches: x.matches, km: Number.isFinite(x.km) ? x.km : null })),
          groups: groups.map((g) => g.map((l) => l.candidate.dc.name)),
        });
      }
    },
  };
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

/** A location entry that says nothing: no qualifier and no coordinates. */
function isUnknown(l: Location): boolean {
  return l.lat === undefined && l.qualifiers.every((q) => q === '');
}

/** Whole km from the client to the DC, or +∞ when either has no coordinates (ranks after those that have). */
function distanceTo(client: Location, dc: CompiledDataCenter): number {
  if (client.lat === undefined || client.lon === undefined || dc.lat === undefined || dc.lon === undefined) return Infinity;
  return Math.round(distanceKm(client.lat, client.lon, dc.lat, dc.lon));
}
