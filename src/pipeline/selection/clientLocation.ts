import type { Location } from '../../core/location/location.js';
import { unpackId, unpackPrefix } from '../../core/lpm/rangeTable.js';
import { narrowScope, type SelectionState } from './stage.js';

/**
 * The client's location, looked up once per selection. Using it makes the decision depend on the
 * client over the location's block, so the ECS scope narrows to that block's prefix length, and
 * on more than the client's answer class, so the outcome is never reused (`decisionCache.ts`).
 * Returns the location id (0 = unknown) and the location.
 */
export function clientLocation(s: SelectionState): { id: number; location: Location } {
  s.varies = "the decision reads the client's location itself (not an answer class)";
  const first = s.locationPacked < 0;
  if (first) s.locationPacked = s.env.geo.lookup(s.client.address);
  const prefix = unpackPrefix(s.locationPacked);
  narrowScope(s, prefix);
  if (first && s.trace) s.trace.step('scope', { input: 'client location (block of the merged location table)', prefix, scopeSoFar: s.scope });
  const id = unpackId(s.locationPacked);
  return { id, location: s.env.geo.location(id) };
}
