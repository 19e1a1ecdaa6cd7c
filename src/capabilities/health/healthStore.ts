import type { StateMap, StateStore } from '../../core/contracts/stateStore.js';
import type { AdminOverride, HealthStatus } from '../../core/views/healthView.js';

/**
 * What health keeps in the {@link StateStore} (src/core/contracts/stateStore.ts): the latest verdict of
 * every check and the operators' overrides, as plain JSON values. The monitor writes them and
 * builds its views from what it watches; the query path reads only the views.
 */

/** The store map of check verdicts, by check id (`monitor@address:port[/host]`). */
export const CHECK_OBSERVATIONS_MAP = 'health.checks';

/** The store map of administrative overrides, by endpoint key (`service/dc/address`). */
export const OVERRIDES_MAP = 'health.overrides';

/** The latest verdict of one check: its status and when it entered it (ms since the epoch). */
export interface CheckObservation {
  readonly status: HealthStatus;
  readonly sinceMs: number;
}

/** Health's two maps of `store`. */
export interface HealthMaps {
  readonly observations: StateMap<CheckObservation>;
  readonly overrides: StateMap<AdminOverride>;
}

/** Health's maps of `store` (the same maps on every call). */
export function healthMaps(store: StateStore): HealthMaps {
  return { observations: store.map<CheckObservation>(CHECK_OBSERVATIONS_MAP), overrides: store.map<AdminOverride>(OVERRIDES_MAP) };
}
