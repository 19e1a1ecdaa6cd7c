import { formatQualifiers } from '../../core/location/location.js';
import { unpackId } from '../../core/lpm/rangeTable.js';
import { applyRanking, applySharedRanking } from '../../pipeline/selection/ranking.js';
import { clientLocation } from '../../pipeline/selection/clientLocation.js';
import { classData, isUnknownLocation } from '../../pipeline/selection/answerClasses.js';
import type { DcRanking } from '../../pipeline/selection/ranking.js';
import { proximity, proximityRanking } from './proximityRanking.js';
import type { LiveDc, SelectionState, Stage } from '../../pipeline/selection/stage.js';

/**
 * `rank` by static proximity (docs/PRODUCT.md §4; Citrix ADC static proximity). The canonical rules 1–4
 * (shared leading qualifiers → the data center's pattern matches the client → nearest by km →
 * one tie group in configuration order) are in `proximityRanking.ts`. Rule 5:
 *
 * 5. A client whose location is unknown (no entry in the data, or an entry with no qualifier and
 *    no coordinates) is never ranked by configuration order: it gets one group of the live
 *    `default` data centers, or of every live data center when none of those is live or none is
 *    configured.
 *
 * The decision depends on the client only through its location. With the record's answer
 * classes (`reader`: the index of its location reader, `proximityReader.ts`) the ranking is
 * precomputed per class and the ECS scope is the class block: neighbouring locations that rank
 * the data centers alike share it. Without them
 * (a location database that cannot be enumerated) the ranking is computed per query and the
 * scope is the client's block in the location table.
 */
export function staticProximityStage(defaultDcs: ReadonlySet<string>, reader = -1): Stage {
  // Rule 5's group depends only on the live list: kept for the last frozen (shared) one.
  let unknownFor: readonly LiveDc[] | undefined;
  let unknownRanked: LiveDc[][] = [];
  return {
    slot: 'rank',
    name: 'static-proximity',
    cacheable: true,
    run(s) {
      if (s.live.length === 0) return;
      let ranking = reader >= 0 ? classData<DcRanking | null>(s, reader) : undefined;
      let shared = false;
      if (ranking !== undefined) {
        shared = true;
      } else {
        const { id, location } = clientLocation(s);
        ranking = isUnknownLocation(id, location)
          ? null
          : proximityRanking(
              location,
              s.live.map((l) => l.candidate.dc),
            );
      }
      if (ranking === null) {
        if (s.trace || unknownFor !== s.live) {
          const defaults = defaultDcs.size > 0 ? s.live.filter((l) => defaultDcs.has(l.candidate.dc.name)) : [];
          s.ranked = [defaults.length > 0 ? defaults : s.live];
          if (s.trace) trace(s, { clientLocation: 'unknown', rule: defaults.length > 0 ? 'default data centers' : 'all live data centers' });
          if (Object.isFrozen(s.live)) {
            unknownFor = s.live;
            unknownRanked = Object.freeze([Object.freeze(s.ranked[0]!)]) as LiveDc[][];
            s.ranked = unknownRanked;
          }
          return;
        }
        s.ranked = unknownRanked;
        return;
      }
      s.ranked = shared ? applySharedRanking(s.live, ranking) : applyRanking(s.live, ranking);
      if (s.trace) trace(s, details(s));
    },
  };
}

function trace(s: SelectionState, detail: Record<string, unknown>): void {
  s.trace!.step('static-proximity', { ...detail, groups: s.ranked.map((g: LiveDc[]) => g.map((l) => l.candidate.dc.name)) });
}

/** For /explain: the client's location and each data center's score (read without narrowing the scope). */
function details(s: SelectionState): Record<string, unknown> {
  const location = s.env.geo.location(unpackId(s.env.geo.lookup(s.client.address)));
  return {
    clientLocation: formatQualifiers(location.qualifiers),
    clientCoordinates: location.lat !== undefined ? [location.lat, location.lon] : null,
    dcs: s.live.map((l) => {
      const p = proximity(location, l.candidate.dc);
      return { dc: l.candidate.dc.name, sharedQualifiers: p.shared, matches: p.matches, km: Number.isFinite(p.km) ? p.km : null };
    }),
  };
}
