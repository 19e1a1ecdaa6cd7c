import { Counter, Gauge, type Registry } from 'prom-client';
import { BucketHistogram, type BucketCell } from '../../core/telemetry/bucketHistogram.js';
import type { EndpointHealth, HealthStatus } from '../../core/views/healthView.js';

/** What the metrics read at scrape time. */
export interface HealthMetricsSource {
  endpoints(): Iterable<[string, EndpointHealth]>;
  dataCenters(): Iterable<[string, HealthStatus]>;
  checks(): Iterable<{ id: string; monitor: string; lastSuccessMs: number; createdMs: number }>;
  now(): number;
  /** With a shared store: whether this node decides alone now, and how many checks its own verdict disagrees with the decision of. */
  quorum?: () => { readonly alone: boolean; readonly outvoted: number; readonly late: number };
}

/** Gauge value of a status: 1 up, 0 down, −1 unknown. */
export function statusValue(s: HealthStatus): number {
  return s === 'up' ? 1 : s === 'down' ? 0 : -1;
}

/**
 * Prometheus metrics of health monitoring (prom-client). Labels: `monitor` (bounded by the
 * configured monitors), `endpoint` (endpoint keys, bounded by the configuration), `check`
 * (monitor@target, bounded likewise), `dc`. Never client addresses.
 */
export class HealthMetrics {
  /** Check duration by monitor and result (seconds). */
  readonly checkSeconds: BucketHistogram<'monitor' | 'result'>;
  /** How late checks start against their schedule (seconds): observe on it per check. */
  readonly scheduleLagSeconds: BucketCell;
  /** Checks skipped because the previous run of the same check had not finished. */
  readonly skipped: Counter<'monitor'>;
  /** Endpoint status changes (after combining monitors), by the status entered. */
  readonly transitions: Counter<'endpoint' | 'to'>;
  /** Quorum decisions (a check's decided status entering `status`), by status and basis (`quorum.ts`: quorum, last-votes, alone); registered only with a shared store. */
  readonly quorumDecisions: Counter<'status' | 'basis'> | undefined;
  /** `checkSeconds` cells by monitor and result, so a check does not hash labels. */
  private readonly checkCells = { ok: new Map<string, BucketCell>(), fail: new Map<string, BucketCell>() };

  constructor(registry: Registry, source: HealthMetricsSource) {
    const registers = [registry];
    this.checkSeconds = new BucketHistogram({
      name: 'gslbd_health_check_duration_seconds',
      help: 'Health check duration, by monitor and result (ok, fail)',
      labelNames: ['monitor', 'result'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registry,
    });
    this.scheduleLagSeconds = new BucketHistogram({
      name: 'gslbd_health_schedule_lag_seconds',
      help: 'How late health checks start against their jittered schedule',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1],
      registry,
    }).cell();
    this.skipped = new Counter({
      name: 'gslbd_health_checks_skipped_total',
      help: 'Checks not started because the previous run of the same check was still running',
      labelNames: ['monitor'] as const,
      registers,
    });
    this.transitions = new Counter({
      name: 'gslbd_health_transitions_total',
      help: 'Endpoint health status changes, by the status entered (up, down, unknown)',
      labelNames: ['endpoint', 'to'] as const,
      registers,
    });
    new Gauge({
      name: 'gslbd_health_endpoint_status',
      help: 'Endpoint status from its monitors: 1 up, 0 down, -1 unknown (1 for an endpoint without monitors)',
      labelNames: ['endpoint'] as const,
      registers,
      collect() {
        this.reset();
        for (const [key, h] of source.endpoints()) this.set({ endpoint: key }, statusValue(h.status));
      },
    });
    new Gauge({
      name: 'gslbd_health_endpoint_override',
      help: 'Administrative override in force for an endpoint (1), by override',
      labelNames: ['endpoint', 'override'] as const,
      registers,
      collect() {
        this.reset();
        for (const [key, h] of source.endpoints()) if (h.override) this.set({ endpoint: key, override: h.override }, 1);
      },
    });
    new Gauge({
      name: 'gslbd_health_dc_status',
      help: 'Data center status from its WAN and LAN check points: 1 up, 0 down, -1 unknown',
      labelNames: ['dc'] as const,
      registers,
      collect() {
        this.reset();
        for (const [dc, s] of source.dataCenters()) this.set({ dc }, statusValue(s));
      },
    });
    new Gauge({
      name: 'gslbd_health_check_seconds_since_success',
      help: 'Seconds since the last successful result of a check (since the check began when it never succeeded)',
      labelNames: ['check', 'monitor'] as const,
      registers,
      collect() {
        this.reset();
        const now = source.now();
        for (const c of source.checks()) this.set({ check: c.id, monitor: c.monitor }, (now - (c.lastSuccessMs || c.createdMs)) / 1000);
      },
    });
    const quorum = source.quorum;
    this.quorumDecisions = quorum
      ? new Counter({
          name: 'gslbd_health_quorum_decisions_total',
          help: 'Quorum health decisions: a check decided status changed, by the status entered (up, down, unknown) and basis (quorum: the live votes; last-votes: the votes last seen while the store is unreachable, within the grace period; alone: this node alone after it)',
          labelNames: ['status', 'basis'] as const,
          registers,
        })
      : undefined;
    if (quorum) {
      new Gauge({
        name: 'gslbd_health_quorum_deciding_alone',
        help: '1 while this node decides health alone (the store unreachable longer than the grace period), else 0',
        registers,
        collect() {
          this.set(quorum().alone ? 1 : 0);
        },
      });
      new Gauge({
        name: 'gslbd_health_quorum_outvoted_checks',
        help: "Checks whose decided status differs from this node's own verdict (e.g. its path alone is bad and the quorum keeps the endpoint up)",
        registers,
        collect() {
          this.set(quorum().outvoted);
        },
      });
      new Gauge({
        name: 'gslbd_health_quorum_late_votes',
        help: "Other nodes' votes gone from the store (their refresh late or their node gone) still counted until the linger ends (quorum.ts)",
        registers,
        collect() {
          this.set(quorum().late);
        },
      });
    }
  }

  /** Counts one quorum decision: a check's decided status entered `status` on `basis`. */
  observeDecision(status: HealthStatus, basis: string): void {
    this.quorumDecisions?.inc({ status, basis });
  }

  /** Records one check's duration (seconds) and result. */
  observeCheck(monitor: string, ok: boolean, seconds: number): void {
    const result = ok ? 'ok' : 'fail';
    const cells = this.checkCells[result];
    let cell = cells.get(monitor);
    if (!cell) cells.set(monitor, (cell = this.checkSeconds.cell({ monitor, result })));
    cell.observe(seconds);
  }
}
