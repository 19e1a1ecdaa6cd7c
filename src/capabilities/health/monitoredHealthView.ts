import type { GslbEndpoint } from '../../core/model/topology.js';
import { UNMONITORED_UP, type EndpointHealth, type HealthStatus, type HealthView } from '../../core/views/healthView.js';

/**
 * Positions of endpoints and (service, data center) pairs in a view's arrays, fixed for one
 * configuration and shared by every view built for it.
 */
export interface ViewIndex {
  /** Endpoint key → position in `endpoints`: every enabled endpoint (any may be overridden). */
  readonly endpoints: ReadonlyMap<string, number>;
  /** By position: true when the endpoint has monitors. */
  readonly monitored: readonly boolean[];
  /** Service → data center → position in `services`. */
  readonly services: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/**
 * An immutable health view built by the health monitor on each change: endpoint health by key
 * (keys outside the index are not enabled endpoints: up), data center status, and service status per
 * data center. The arrays are the monitor's copies for this view and never change afterwards;
 * lookups are one map read and one array read, with no allocation.
 */
export class MonitoredHealthView implements HealthView {
  private describedAs: string | undefined;

  constructor(
    private readonly index: ViewIndex,
    private readonly endpoints: readonly EndpointHealth[],
    private readonly services: readonly HealthStatus[],
    private readonly hosts: ReadonlyMap<string, HealthStatus>,
  ) {}

  endpointUp(endpoint: GslbEndpoint): boolean {
    const h = this.endpointHealth(endpoint.key);
    if (h.override === 'force-up') return true;
    if (h.override !== undefined) return false;
    return h.status !== 'down' && this.hostStatus(endpoint.dc.name) !== 'down';
  }

  endpointHealth(key: string): EndpointHealth {
    const i = this.index.endpoints.get(key);
    return i === undefined ? UNMONITORED_UP : this.endpoints[i]!;
  }

  hostStatus(dc: string): HealthStatus {
    return this.hosts.get(dc) ?? 'up';
  }

  serviceStatus(service: string, dc: string): HealthStatus {
    const i = this.index.services.get(service)?.get(dc);
    return i === undefined ? 'down' : this.services[i]!;
  }

  /** Counts for /status, computed when first asked. */
  get description(): string {
    if (this.describedAs === undefined) {
      let up = 0;
      let down = 0;
      let unknown = 0;
      let overrides = 0;
      this.endpoints.forEach((h, i) => {
        if (h.override) overrides++;
        if (!this.index.monitored[i]) return;
        if (h.status === 'up') up++;
        else if (h.status === 'down') down++;
        else unknown++;
      });
      this.describedAs =
        up + down + unknown === 0 && overrides === 0 && this.hosts.size === 0
          ? 'no monitors configured'
          : `${up + down + unknown} monitored endpoints: ${up} up, ${down} down, ${unknown} unknown; ${overrides} overrides; ${this.hosts.size} data centers with check points`;
    }
    return this.describedAs;
  }

  /** Every endpoint in the index, with its health. */
  *entries(): IterableIterator<[string, EndpointHealth]> {
    for (const [key, i] of this.index.endpoints) yield [key, this.endpoints[i]!];
  }

  /** Every data center with check points, with its status. */
  dataCenters(): IterableIterator<[string, HealthStatus]> {
    return this.hosts.entries();
  }
}
