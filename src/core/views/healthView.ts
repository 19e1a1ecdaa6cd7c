import type { GslbEndpoint } from '../model/topology.js';

/** What monitors say about a target: `unknown` until the first check result (src/capabilities/health/README.md). */
export type HealthStatus = 'up' | 'down' | 'unknown';

/**
 * An operator's override through the admin API: `force-up` answers whatever the monitors say,
 * `force-down` never answers, `drain` gives no new answers (caches run out their TTL).
 */
export type AdminOverride = 'force-up' | 'force-down' | 'drain';

/** The health of one endpoint as of one view. */
export interface EndpointHealth {
  /** Combined over its monitors: down if any is down, else unknown if any has no result, else up. Up when unmonitored. */
  readonly status: HealthStatus;
  readonly override: AdminOverride | undefined;
  /** When `status` was entered (ms since the epoch); for unknown, when monitoring of it began. */
  readonly sinceMs: number;
}

/**
 * Read-only view of health state that the gate stage consults on every query. Implementations
 * are immutable snapshots: a health change publishes a new view (and a new engine snapshot), so a
 * query never sees half an update. A view's identity is its version: the health gate's memo and
 * the decision cache (`selection/decisionCache.ts`) reuse results for as long as they see the
 * same view object, so an implementation must never change what a view it handed out says.
 *
 * `hostStatus` and `serviceStatus` are the `host.status` and `service.status` signals of docs/PRODUCT.md §3
 * that multi-source ranking and gating read (key: a data center name; a service name and a data
 * center name).
 */
export interface HealthView {
  /** True when the endpoint may be answered now under the default cold-start rule (unknown counts as up). */
  endpointUp(endpoint: GslbEndpoint): boolean;
  /** The endpoint's health by its key (`service/dc/address`); an unmonitored endpoint is up. */
  endpointHealth(key: string): EndpointHealth;
  /** The data center's composite status from its WAN and LAN check points; up when it has none. */
  hostStatus(dc: string): HealthStatus;
  /**
   * The service's status in a data center: up when one of its enabled endpoints there is up (or
   * forced up), unknown when none is up and one is unknown, down otherwise (also when the service
   * has no endpoint there).
   */
  serviceStatus(service: string, dc: string): HealthStatus;
  /** Short description for /status (e.g. "all up (no monitors)"). */
  readonly description: string;
}

/** The health of an endpoint nobody monitors. */
export const UNMONITORED_UP: EndpointHealth = { status: 'up', override: undefined, sinceMs: 0 };

/** The view without monitors: everything is up. */
export const allUpHealthView: HealthView = {
  endpointUp: () => true,
  endpointHealth: () => UNMONITORED_UP,
  hostStatus: () => 'up',
  serviceStatus: () => 'up',
  description: 'all up (no monitors configured)',
};

/**
 * A view with the listed endpoint keys (`service/dc/address`) down and everything else up: for
 * tests and tools that state health directly instead of monitoring it.
 */
export function endpointsDownView(keys: Iterable<string>, description = 'endpoints down by fiat'): HealthView {
  const down = new Set(keys);
  const DOWN: EndpointHealth = { status: 'down', override: undefined, sinceMs: 0 };
  return {
    endpointUp: (e) => !down.has(e.key),
    endpointHealth: (key) => (down.has(key) ? DOWN : UNMONITORED_UP),
    hostStatus: () => 'up',
    serviceStatus: () => 'up',
    description,
  };
}
