import type { AdminOverride, HealthStatus, HealthView } from '../../core/views/healthView.js';
import type { RunningCheck } from './checkRunner.js';
import type { HealthPlan } from './healthPlan.js';
import type { StateFileReport } from './stateFileKeeper.js';

/** The JSON of GET /health. */
export interface HealthReport {
  stateFile: StateFileReport;
  endpoints: { endpoint: string; status: HealthStatus; override: AdminOverride | null; since: string | null; checks: readonly string[] }[];
  checks: {
    check: string;
    monitor: string;
    type: string;
    status: HealthStatus;
    since: string;
    secondsSinceSuccess: number | null;
    lastLatencyMs: number | null;
    lastError: string | null;
  }[];
  datacenters: { dc: string; status: HealthStatus; rule: string; wan: readonly string[]; lan: readonly string[] }[];
  services: { service: string; dc: string; status: HealthStatus }[];
}

/** What a report is made of: one moment of a monitor. */
export interface HealthReportInput {
  readonly plan: HealthPlan;
  readonly view: HealthView;
  readonly checks: Iterable<RunningCheck>;
  readonly stateFile: StateFileReport;
  /** ms since the epoch */
  readonly nowMs: number;
}

/** Everything /health shows: checks, endpoints, data centers, services, the state file. */
export function healthReport({ plan, view, checks, stateFile, nowMs }: HealthReportInput): HealthReport {
  const services = new Map<string, Set<string>>();
  for (const e of plan.endpoints) {
    let dcs = services.get(e.service);
    if (!dcs) services.set(e.service, (dcs = new Set()));
    dcs.add(e.dc);
  }
  return {
    stateFile,
    endpoints: plan.endpoints.map((e) => {
      const h = view.endpointHealth(e.key);
      return {
        endpoint: e.key,
        status: h.status,
        override: h.override ?? null,
        since: h.sinceMs > 0 ? new Date(h.sinceMs).toISOString() : null,
        checks: e.checks,
      };
    }),
    checks: [...checks].map((c) => ({
      check: c.planned.id,
      monitor: c.planned.monitor.name,
      type: c.planned.monitor.type,
      status: c.state.status,
      since: new Date(c.state.sinceMs).toISOString(),
      secondsSinceSuccess: c.state.lastSuccessMs > 0 ? (nowMs - c.state.lastSuccessMs) / 1000 : null,
      lastLatencyMs: c.state.lastLatencyMs >= 0 ? c.state.lastLatencyMs : null,
      lastError: c.state.lastError || null,
    })),
    datacenters: plan.dcs.map((d) => ({ dc: d.name, status: view.hostStatus(d.name), rule: d.rule, wan: d.wan, lan: d.lan })),
    services: [...services].flatMap(([service, dcs]) => [...dcs].map((dc) => ({ service, dc, status: view.serviceStatus(service, dc) }))),
  };
}
