import type { AdminOverride, HealthStatus, HealthView } from '../../core/views/healthView.js';
import type { RunningCheck } from './checkRunner.js';
import type { HealthPlan } from './healthPlan.js';
import type { StateFileReport } from './stateFileKeeper.js';
import { runSteps, type Steps } from '../../pipeline/selection/steps.js';

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

/** Endpoints or checks described between two yields of {@link healthReportSteps}. */
export const REPORT_STEP = 256;

/** Everything /health shows: checks, endpoints, data centers, services, the state file. */
export function healthReport(input: HealthReportInput): HealthReport {
  return runSteps(healthReportSteps(input));
}

/**
 * {@link healthReport} as steps of {@link REPORT_STEP} endpoints or checks, for `runInSlices`: with
 * 15,000 endpoints (5,000 services in three data centers) `/health` was built in one turn of
 * 10-20 ms (issue 17). The view and plan are the input's; a check's state is read at its step.
 */
export function* healthReportSteps({ plan, view, checks, stateFile, nowMs }: HealthReportInput): Steps<HealthReport> {
  const services = new Map<string, Set<string>>();
  const endpoints: HealthReport['endpoints'] = [];
  for (const e of plan.endpoints) {
    let dcs = services.get(e.service);
    if (!dcs) services.set(e.service, (dcs = new Set()));
    dcs.add(e.dc);
    const h = view.endpointHealth(e.key);
    endpoints.push({
      endpoint: e.key,
      status: h.status,
      override: h.override ?? null,
      since: h.sinceMs > 0 ? new Date(h.sinceMs).toISOString() : null,
      checks: e.checks,
    });
    if (endpoints.length % REPORT_STEP === 0) yield;
  }
  const described: HealthReport['checks'] = [];
  for (const c of checks) {
    described.push({
      check: c.planned.id,
      monitor: c.planned.monitor.name,
      type: c.planned.monitor.type,
      status: c.state.status,
      since: new Date(c.state.sinceMs).toISOString(),
      secondsSinceSuccess: c.state.lastSuccessMs > 0 ? (nowMs - c.state.lastSuccessMs) / 1000 : null,
      lastLatencyMs: c.state.lastLatencyMs >= 0 ? c.state.lastLatencyMs : null,
      lastError: c.state.lastError || null,
    });
    if (described.length % REPORT_STEP === 0) yield;
  }
  const perService: HealthReport['services'] = [];
  let n = 0;
  for (const [service, dcs] of services) {
    for (const dc of dcs) perService.push({ service, dc, status: view.serviceStatus(service, dc) });
    if (++n % REPORT_STEP === 0) yield;
  }
  return {
    stateFile,
    endpoints,
    checks: described,
    datacenters: plan.dcs.map((d) => ({ dc: d.name, status: view.hostStatus(d.name), rule: d.rule, wan: d.wan, lan: d.lan })),
    services: perService,
  };
}
