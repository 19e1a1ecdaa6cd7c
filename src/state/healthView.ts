import type { GslbEndpoint } from '../selection/types.js';

/**
 * Read-only view of health state that the gate stage consults on every query. Implementations
 * are immutable snapshots: a health change publishes a new view (and a new engine snapshot), so a
 * query never sees half an update.
 *
 * The monitors (health issue) implement it; until then every endpoint is up.
 */
export interface HealthView {
  /** True when the endpoint may be answered now. */
  endpointUp(endpoint: GslbEndpoint): boolean;
  /** Short description for /status (e.g. "all up (no monitors)"). */
  readonly description: string;
}

/** The view without monitors: everything is up. */
export const allUpHealthView: HealthView = {
  endpointUp: () => true,
  description: 'all up (no monitors configured)',
};
