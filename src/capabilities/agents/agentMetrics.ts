import { Counter, Gauge, type Registry } from 'prom-client';
import type { ProbeQueue } from './probeQueue.js';

/** Results of an agent report (`gslbd_agent_reports_total{agent,result}`). */
export type ReportResult = 'accepted' | 'invalid' | 'unknown_reference' | 'forbidden';

/** The agents capability's Prometheus metrics. Agent names are bounded by the configuration; no client address is a label. */
export interface AgentMetrics {
  readonly reports: Counter<'agent' | 'result'>;
  readonly authFailures: Counter;
}

/**
 * Registers `gslbd_agent_reports_total{agent,result}`, `gslbd_agent_auth_failures_total`,
 * `gslbd_agent_probe_requests_total{result}` (queued, dropped, given, expired, fresh) and
 * `gslbd_agent_probe_queue_length`.
 */
export function registerAgentMetrics(registry: Registry, queue: ProbeQueue): AgentMetrics {
  const seen: Record<string, number> = {};
  new Counter({
    name: 'gslbd_agent_probe_requests_total',
    help: 'Probe requests: queued, dropped (too many noted between drains), given to agents, skipped as expired or freshly measured',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      for (const [result, n] of Object.entries(queue.counts)) {
        if (n > (seen[result] ?? 0)) this.inc({ result }, n - (seen[result] ?? 0));
        seen[result] = n;
      }
    },
  });
  new Gauge({
    name: 'gslbd_agent_probe_queue_length',
    help: 'Probe requests kept in the queue',
    registers: [registry],
    collect() {
      this.set(queue.length);
    },
  });
  return {
    reports: new Counter({
      name: 'gslbd_agent_reports_total',
      help: 'Agent reports by agent and result (accepted, invalid, unknown_reference, forbidden: a write for another data center or zone)',
      labelNames: ['agent', 'result'] as const,
      registers: [registry],
    }),
    authFailures: new Counter({
      name: 'gslbd_agent_auth_failures_total',
      help: 'Agent API requests refused for a missing or wrong credential',
      registers: [registry],
    }),
  };
}
