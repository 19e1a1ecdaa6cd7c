import type { HealthStatus } from '../core/views/healthView.js';
import type { HealthMonitor } from '../capabilities/health/healthMonitor.js';

/** Where monitor verdicts go: the metric store's `setMonitorStatus` (src/capabilities/steering/metricStore.ts). */
export interface MonitorStatusSink {
  setMonitorStatus(source: 'host' | 'service', subject: string, dc: string, up: boolean | undefined, nowMs: number): void;
}

/**
 * Writes the monitors' data center and service statuses into the metric store as the monitor
 * side of `host.status` and `service.status` (docs/PRODUCT.md §3; the store combines them with pushed
 * statuses: both must say up). Unknown is no verdict; a status no monitor covers any more (after a
 * reload) is cleared. Call after every published health view and after every reconfiguration.
 */
export class StatusSignals {
  private previous = new Set<string>();

  constructor(
    private readonly monitor: HealthMonitor,
    private readonly sink: MonitorStatusSink,
  ) {}

  sync(nowMs: number): void {
    const { hosts, services } = this.monitor.coveredStatuses();
    const seen = new Set<string>();
    const verdict = (s: HealthStatus): boolean | undefined => (s === 'up' ? true : s === 'down' ? false : undefined);
    for (const [dc, status] of hosts) {
      seen.add(`host\u0000\u0000${dc}`);
      this.sink.setMonitorStatus('host', '', dc, verdict(status), nowMs);
    }
    for (const [service, dc, status] of services) {
      seen.add(`service\u0000${service}\u0000${dc}`);
      this.sink.setMonitorStatus('service', service, dc, verdict(status), nowMs);
    }
    for (const key of this.previous) {
      if (seen.has(key)) continue;
      const [source, subject, dc] = key.split('\u0000') as ['host' | 'service', string, string];
      this.sink.setMonitorStatus(source, subject, dc, undefined, nowMs);
    }
    this.previous = seen;
  }
}
