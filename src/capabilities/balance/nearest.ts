import { oneEndpointAlgorithm, type BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';
import { distanceKm } from '../../core/location/location.js';
import { clientLocation } from '../../pipeline/selection/clientLocation.js';
import type { LiveDc, SelectionState } from '../../pipeline/selection/stage.js';
import type { GslbEndpoint } from '../../core/model/topology.js';

/**
 * `nearest` (seed 004 "proximity to the requester", docs/PRODUCT.md §3): the live endpoint nearest to the client's
 * location by great-circle distance, rounded to whole km; an endpoint without coordinates takes
 * its data center's (compileRecord.ts), and one with neither ranks after those with. Endpoints
 * tied for nearest — and all of them when the client's location or coordinates are unknown —
 * share answers by round-robin (the DC's rotation counter).
 *
 * When every live endpoint stands at the same coordinates the answer cannot depend on the
 * client, so the location is not consulted and the ECS scope stays untouched; otherwise it
 * narrows to the client's location block.
 */
export const nearestAlgorithm: BalanceAlgorithm = oneEndpointAlgorithm('nearest', (dc, s) => {
  const eps = dc.endpoints;
  if (eps.length === 1 || sameCoordinates(eps)) return roundRobin(eps, dc, s);
  const { location } = clientLocation(s);
  if (location.lat === undefined || location.lon === undefined) return roundRobin(eps, dc, s);
  let best = Infinity;
  let nearest: GslbEndpoint[] = [];
  for (const e of eps) {
    const km = e.lat === undefined || e.lon === undefined ? Infinity : Math.round(distanceKm(location.lat, location.lon, e.lat, e.lon));
    if (km < best) {
      best = km;
      nearest = [e];
    } else if (km === best) {
      nearest.push(e);
    }
  }
  return nearest.length === 1 ? nearest[0]! : roundRobin(nearest, dc, s);
});

function roundRobin(eps: readonly GslbEndpoint[], dc: LiveDc, s: SelectionState): GslbEndpoint {
  return eps[s.env.ctx.rotation.next(dc.candidate.rotationKey) % eps.length]!;
}

function sameCoordinates(eps: readonly GslbEndpoint[]): boolean {
  const first = eps[0]!;
  for (let i = 1; i < eps.length; i++) if (eps[i]!.lat !== first.lat || eps[i]!.lon !== first.lon) return false;
  return true;
}
