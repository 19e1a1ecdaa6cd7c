import type { AdminReply, AdminRequest, AdminRoute } from '../../core/contracts/adminRoute.js';
import type { StateMap } from '../../core/contracts/stateStore.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { AgentMetrics, ReportResult } from './agentMetrics.js';
import type { AgentCredentials, AgentIdentity } from './credentials.js';
import type { MetricPushGate, PushProblem } from './pushGate.js';
import { MAX_WAIT_MS, type ProbeQueue } from './probeQueue.js';
import type { ProbeResults } from './probeResults.js';
import { AGENT_API_VERSION, reportSchema, type AgentReport, type ProbeResultReport } from '../../core/contracts/agentApi.js';

/** The state-store map of the last report per agent (key: the agent's name), for `GET /agents`. */
export const AGENT_REPORTS_MAP = 'agents.reports';

/** The last report of one agent as the engine keeps it. */
export interface AgentReportSummary {
  readonly agent: string;
  readonly dc?: string;
  readonly zone?: string;
  /** When the engine received it (ms since the epoch). */
  readonly atMs: number;
  readonly host: boolean;
  readonly services: number;
  readonly probes: number;
}

/** Most probe requests one poll returns. */
export const MAX_REQUESTS_PER_POLL = 1000;

/** What the agent routes work with. */
export interface AgentRouteDeps {
  readonly credentials: () => AgentCredentials;
  /** The push API's gate (undefined until the composition root connects it). */
  readonly gate: () => MetricPushGate | undefined;
  readonly queue: ProbeQueue;
  readonly results: ProbeResults;
  readonly reports: StateMap<AgentReportSummary>;
  readonly metrics: AgentMetrics;
  readonly log: Logger;
  readonly now: () => number;
}

/**
 * The agent API, version 1 (docs/PRODUCT.md §7; README.md of this folder), on the admin listener.
 * Every route but `GET /agents` needs an agent's own bearer credential (401 without or with a wrong
 * one), never the admin token:
 * - `GET /agent/v1/hello`: who the credential says the agent is, and the queue's timing;
 * - `POST /agent/v1/report`: one batch per cycle for the agent's own data center or zone (403 for
 *   another, logged and counted); host and service samples and the client metrics derived from
 *   probes go through the push API's gate, all or nothing (400 / 422 with each problem's path);
 * - `GET /agent/v1/probes?max=&wait=`: probe requests for the agent's group, long-polling up to
 *   `wait` seconds (≤ 30);
 * - `GET /agents` (open, read-only): every configured agent and its last report.
 */
export function agentRoutes(deps: AgentRouteDeps): AdminRoute[] {
  const authenticated =
    (handle: (agent: AgentIdentity, req: AdminRequest) => AdminReply | Promise<AdminReply>) =>
    (req: AdminRequest): AdminReply | Promise<AdminReply> => {
      const header = req.headers?.authorization;
      const agent = deps.credentials().identify(typeof header === 'string' ? header : undefined);
      if (agent === undefined) {
        deps.metrics.authFailures.inc();
        return { status: 401, json: { error: 'missing or wrong agent credential' } };
      }
      return handle(agent, req);
    };
  return [
    {
      method: 'GET',
      path: `/agent/v${AGENT_API_VERSION}/hello`,
      mutating: false,
      handle: authenticated((agent) => ({
        status: 200,
        json: {
          apiVersion: AGENT_API_VERSION,
          agent: agent.name,
          ...(agent.dc !== undefined ? { dc: agent.dc } : { zone: agent.zone }),
          probes: { maxWaitSeconds: MAX_WAIT_MS / 1000, networkLengths: deps.queue.lengths },
        },
      })),
    },
    {
      method: 'POST',
      path: `/agent/v${AGENT_API_VERSION}/report`,
      mutating: false,
      handle: authenticated((agent, req) => report(deps, agent, req.body)),
    },
    {
      method: 'GET',
      path: `/agent/v${AGENT_API_VERSION}/probes`,
      mutating: false,
      handle: authenticated(async (agent, req) => {
        const max = boundedInt(req.url.searchParams.get('max'), 100, 1, MAX_REQUESTS_PER_POLL);
        const wait = boundedInt(req.url.searchParams.get('wait'), 0, 0, MAX_WAIT_MS / 1000);
        if (max === undefined || wait === undefined)
          return { status: 400, json: { error: `max is 1–${MAX_REQUESTS_PER_POLL}, wait is 0–${MAX_WAIT_MS / 1000} seconds` } };
        const requests = await deps.queue.take(agent.group, max, wait * 1000);
        const now = deps.now();
        return {
          status: 200,
          json: {
            requests: requests.map((r) => ({ target: r.target, network: r.network, ageMs: now - r.atMs })),
            backlog: await deps.queue.backlog(agent.group),
          },
        };
      }),
    },
    {
      method: 'GET',
      path: '/agents',
      mutating: false,
      handle() {
        const now = deps.now();
        return {
          status: 200,
          json: {
            agents: deps
              .credentials()
              .identities()
              .map((a) => {
                const last = deps.reports.get(a.name);
                return {
                  agent: a.name,
                  ...(a.dc !== undefined ? { dc: a.dc } : { zone: a.zone }),
                  lastReport: last ? { ...last, ageMs: now - last.atMs } : null,
                };
              }),
            probeQueue: { length: deps.queue.length, ...deps.queue.counts, results: deps.results.size },
          },
        };
      },
    },
  ];
}

/** An integer query parameter within bounds (`fallback` when absent), or undefined when malformed. */
function boundedInt(text: string | null, fallback: number, min: number, max: number): number | undefined {
  if (text === null) return fallback;
  const n = Number(text);
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}

/** Handles one report: ownership, the push API's gate for every part, then all parts applied together. */
function report(deps: AgentRouteDeps, agent: AgentIdentity, body: unknown): AdminReply {
  const count = (result: ReportResult): void => {
    deps.metrics.reports.inc({ agent: agent.name, result });
  };
  const parsed = reportSchema.safeParse(body);
  if (!parsed.success) {
    count('invalid');
    return {
      status: 400,
      json: {
        error: 'report rejected; nothing was applied',
        problems: parsed.error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message })),
      },
    };
  }
  const r = parsed.data;
  const refused = forbidden(agent, r);
  if (refused !== undefined) {
    count('forbidden');
    deps.log.warn({ agent: agent.name, dc: agent.dc, zone: agent.zone, reportFor: r.dc ?? r.zone, reason: refused }, 'agent report refused');
    return { status: 403, json: { error: refused } };
  }
  const gate = deps.gate();
  if (gate === undefined) return { status: 503, json: { error: 'the metric store is not connected yet' } };
  const batches: { part: string; gated: ReturnType<MetricPushGate> }[] = [];
  const dc = agent.dc;
  if (dc !== undefined) {
    if (r.host !== undefined) batches.push({ part: 'host', gated: gate('host', { samples: [{ ...r.host, dc }] }, agent.name) });
    if (r.services !== undefined && r.services.length > 0) {
      batches.push({ part: 'services', gated: gate('service', { samples: r.services.map((s) => ({ ...s, dc })) }, agent.name) });
    }
    const probes = (r.probes ?? []).map((p) => clientSample(p, dc));
    if (probes.length > 0) batches.push({ part: 'probes', gated: gate('client', { samples: probes }, agent.name) });
  }
  const problems: PushProblem[] = [];
  let status: 400 | 422 = 422;
  for (const { part, gated } of batches) {
    if (gated.ok) continue;
    if (gated.status === 400) status = 400;
    for (const p of gated.problems) problems.push({ path: repath(part, p.path), message: p.message });
  }
  if (problems.length > 0) {
    count(status === 400 ? 'invalid' : 'unknown_reference');
    return { status, json: { error: 'report rejected; nothing was applied', problems } };
  }
  for (const { gated } of batches) if (gated.ok) gated.commit();
  const now = deps.now();
  if (r.probes !== undefined && r.probes.length > 0) deps.results.record(agent, r.probes, deps.queue.lengths, now);
  deps.reports.set(agent.name, {
    agent: agent.name,
    ...(agent.dc !== undefined ? { dc: agent.dc } : { zone: agent.zone }),
    atMs: now,
    host: r.host !== undefined,
    services: r.services?.length ?? 0,
    probes: r.probes?.length ?? 0,
  });
  count('accepted');
  return { status: 200, json: { accepted: { host: r.host !== undefined ? 1 : 0, services: r.services?.length ?? 0, probes: r.probes?.length ?? 0 } } };
}

/** Why a report is not the agent's to send, or undefined when it is. */
function forbidden(agent: AgentIdentity, r: AgentReport): string | undefined {
  if (agent.dc !== undefined) {
    if (r.dc !== agent.dc)
      return `agent "${agent.name}" reports for data center "${agent.dc}" only, not ${r.dc !== undefined ? `data center "${r.dc}"` : `zone "${r.zone}"`}`;
    const other = [r.host?.dc, ...(r.services ?? []).map((s) => s.dc)].find((d) => d !== undefined && d !== agent.dc);
    if (other !== undefined) return `agent "${agent.name}" reports for data center "${agent.dc}" only, not ${JSON.stringify(other)}`;
    return undefined;
  }
  if (r.zone !== agent.zone)
    return `agent "${agent.name}" reports for zone "${agent.zone}" only, not ${r.zone !== undefined ? `zone "${r.zone}"` : `data center "${r.dc}"`}`;
  if (r.host !== undefined || (r.services ?? []).length > 0) return `agent "${agent.name}" measures for a zone: it may report probe results only`;
  return undefined;
}

/**
 * The client sample of the push API for one probe train (docs/PRODUCT.md §3 client metrics):
 * `packetLoss` from sent and received, `hops` and `ttl` as measured, and for MOS the one-way
 * latency (half the median RTT) with the jitter, which the push API turns into a score.
 */
function clientSample(p: ProbeResultReport, dc: string): Record<string, unknown> {
  const packetLoss = Math.round(((p.sent - p.received) / p.sent) * 100_000) / 1000;
  return {
    network: p.target,
    dc,
    packetLoss,
    ...(p.hops !== undefined ? { hops: p.hops } : {}),
    ...(p.ttl !== undefined ? { ttl: p.ttl } : {}),
    ...(p.received > 0 && p.jitterMs !== undefined ? { latencyMs: p.rttMedianMs! / 2, jitterMs: p.jitterMs } : {}),
  };
}

/** A push API problem path (`samples[2].cpu`) as the report's (`services[2].cpu`, `host.cpu`, `probes[2].packetLoss`). */
function repath(part: string, path: string): string {
  if (part === 'host') return path.replace(/^samples\[0\]/, 'host');
  return path.replace(/^samples/, part);
}
