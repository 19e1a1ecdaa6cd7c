import type { GslbEndpoint } from '../selection/types.js';
import { UNMONITORED_UP, type EndpointHealth, type HealthStatus, type HealthView } from '../state/healthView.js';

/**
 * An immutable health view built by the health monitor on each change: endpoint health by key
 * (absent keys are unmonitored and up), data center status, and service status per data center.
 * Never modified after construction; lookups are map reads with no allocation.
 */
export class MonitoredHealthView implements HealthView {
  constructor(
    private readonly endpoints: ReadonlyMap<string, EndpointHealth>,
    private readonly hosts: ReadonlyMap<string, HealthStatus>,
    private readonly services: ReadonlyMap<string, ReadonlyMap<string, HealthStatus>>,
    readonly description: string,
  ) {}

  endpointUp(endpoint: GslbEndpoint): boolean {
    const h = this.endpointHealth(endpoint.key);
    if (h.override === 'force-up') return true;
    if (h.override !== undefined) return false;
    return h.status !== 'down' && this.hostStatus(endpoint.dc.name) !== 'down';
  }

  endpointHealth(key: string): EndpointHealth {
    return this.endpoints.get(key) ?? UNMONITORED_UP;
  }

  hostStatus(dc: string): HealthStatus {
    return this.hosts.get(dc) ?? 'up';
  }

  serviceStatus(service: string, dc: string): HealthStatus {
    return this.services.get(service)?.get(dc) ?? 'down';
  }

  /** Every endpoint that is monitored or overridden, with its health. */
  entries(): IterableIterator<[string, EndpointHealth]> {
    return this.endpoints.entries();
  }

  /** Every data center with check points, with its status. */
  dataCenters(): IterableIterator<[string, HealthStatus]> {
    return this.hosts.entries();
  }
}
