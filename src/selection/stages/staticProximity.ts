import { distanceKm, formatQualifiers, WILDCARD, type Location, type Qualifiers } from '../../geo/location.js';
import { clientLocation } from '../clientLocation.js';
import type { LiveDc, Stage } from '../types.js';

/**
 * `rank` by static proximity (SPEC §4): data centers sharing more leading location qualifiers
 * with the client rank higher; among equals the nearer by great-circle distance (rounded to whole
 * km) ranks higher; remaining ties form one rank group, split later by the pick stage. A client
 * whose location is unknown gets one group: the live `defaultDcs`, or every live DC when none of
 * them is live or none is configured.
 *
 * The decision depends on the client only through its location, so the ECS scope is the prefix
 * of the client's location block (including the block of "unknown").
 */
export function staticProximityStage(defaultDcs: ReadonlySet<string>): Stage {
  return {
    slot: 'rank',
    name: 'static-proximity',
    run(s) {
      if (s.live.length === 0) return;
      const { id, location } = clientLocation(s);
      if (id === 0) {
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
      const scored = s.live.map((l) => ({ l, shared: sharedLeading(location.qualifiers, l.candidate.dc.qualifiers), km: distanceTo(location, l) }));
      scored.sort((a, b) => b.shared - a.shared || a.km - b.km);
      const groups: LiveDc[][] = [];
      let prev: (typeof scored)[number] | undefined;
      for (const x of scored) {
        if (prev && prev.shared === x.shared && prev.km === x.km) groups[groups.length - 1]!.push(x.l);
        else groups.push([x.l]);
        prev = x;
      }
      s.ranked = groups;
      if (s.trace) {
        s.trace.step('static-proximity', {
          clientLocation: formatQualifiers(location.qualifiers),
          clientCoordinates: location.lat !== undefined ? [location.lat, location.lon] : null,
          dcs: scored.map((x) => ({ dc: x.l.candidate.dc.name, sharedQualifiers: x.shared, km: Number.isFinite(x.km) ? x.km : null })),
          groups: groups.map((g) => g.map((l) => l.candidate.dc.name)),
        });
      }
    },
  };
}

/**
 * Number of leading qualifiers the data center shares with the client. A wildcard on the data
 * center side matches any value without counting; an unknown client value ('') matches nothing.
 */
export function sharedLeading(client: Qualifiers, dc: Qualifiers): number {
  let n = 0;
  for (let i = 0; i < client.length; i++) {
    const d = dc[i]!;
    if (d === WILDCARD) continue;
    if (d !== client[i] || d === '') break;
    n++;
  }
  return n;
}

/** Whole km from the client to the DC, or +∞ when either has no coordinates (ranks after those that have). */
function distanceTo(client: Location, l: LiveDc): number {
  const dc = l.candidate.dc;
  if (client.lat === undefined || client.lon === undefined || dc.lat === undefined || dc.lon === undefined) return Infinity;
  return Math.round(distanceKm(client.lat, client.lon, dc.lat, dc.lon));
}
