import type { AdminRoute } from '../../core/contracts/adminRoute.js';
import type { ConfigProblem } from '../../core/config/load.js';
import type { Capability, CapabilityHost, CapabilityRuntime, EnvPart } from '../../pipeline/capability.js';
import { registerAgentMetrics } from './agentMetrics.js';
import { AGENT_REPORTS_MAP, agentRoutes, type AgentReportSummary } from './agentRoutes.js';
import { agentsSchema, type AgentsConfig } from './agentsSchema.js';
import { AgentCredentials, agentFileReferenceProblems, agentTokens } from './credentials.js';
import { ProbeQueue } from './probeQueue.js';
import { ProbeResults } from './probeResults.js';
import type { MetricPushGate } from './pushGate.js';

/** What the agents capability reads of the configuration. */
export interface AgentsSection {
  readonly agents: AgentsConfig;
  readonly datacenters: readonly { readonly name: string }[];
}

/** A started agents capability. */
export interface AgentsRuntime extends CapabilityRuntime<AgentsSection> {
  readonly routes: readonly AdminRoute[];
  /** The probe-request queue (the snapshot's probe demand sink while agents are configured). */
  readonly queue: ProbeQueue;
  readonly results: ProbeResults;
  /** Connects the push API's gate (the composition root: steering's); reports answer 503 before. */
  connectMetricGate(gate: MetricPushGate): void;
}

/** The agents capability: its {@link Capability} members and its file checks. */
export interface AgentsCapability extends Capability<AgentsSection> {
  readonly name: 'agents';
  readonly schema: { readonly root: { readonly agents: typeof agentsRootSchema } };
  start(host: CapabilityHost): AgentsRuntime;
  /** The agents' token files that are missing or unusable, for the composition root's file check. */
  fileReferenceProblems(config: AgentsSection, configFile: string): ConfigProblem[];
}

/** The `agents` key of the configuration root; absent means no agents (the agent API refuses every credential). */
export const agentsRootSchema = agentsSchema.prefault({}).describe('The engine side of gslbd agent: agent credentials and the probe-request queue.');

/** How often expired probe results are swept (ms). */
const SWEEP_MS = 60_000;

/**
 * The engine side of `gslbd agent` (docs/PRODUCT.md §5, §7; README.md): per-agent credentials,
 * the versioned agent API on the admin listener (reports fed through the push API's gate into the
 * metric store; probe results kept for the proximity database), and the probe-request queue, the
 * snapshot's probe demand sink. Its state — probe requests (a stream read per data center or
 * zone), probe results, last reports — lives in the `StateStore`.
 */
export const agentsCapability: AgentsCapability = {
  name: 'agents',
  schema: { root: { agents: agentsRootSchema } },
  check(config, ctx) {
    const dcs = new Set(config.datacenters.map((d) => d.name));
    const names = new Map<string, number>();
    const tokens = new Map<string, number>();
    config.agents.credentials.forEach((c, i) => {
      if (c.dc !== undefined && !dcs.has(c.dc))
        ctx.addIssue({ code: 'custom', path: ['agents', 'credentials', i, 'dc'], message: `unknown data center "${c.dc}"` });
      const sameName = names.get(c.name);
      if (sameName !== undefined)
        ctx.addIssue({ code: 'custom', path: ['agents', 'credentials', i, 'name'], message: `agent "${c.name}" is already credentials[${sameName}]` });
      else names.set(c.name, i);
      if (c.token !== undefined) {
        const same = tokens.get(c.token);
        if (same !== undefined)
          ctx.addIssue({ code: 'custom', path: ['agents', 'credentials', i, 'token'], message: `the same token as credentials[${same}]: one token per agent` });
        else tokens.set(c.token, i);
      }
    });
  },
  start: startAgents,
  fileReferenceProblems: (config, configFile) => agentFileReferenceProblems(config.agents, configFile),
};

function startAgents(host: CapabilityHost): AgentsRuntime {
  const results = new ProbeResults(host.store);
  const queue = new ProbeQueue(host.store, results, () => host.now());
  const metrics = registerAgentMetrics(host.metrics.registry, queue);
  let credentials = new AgentCredentials([], []);
  let prepared: { config: AgentsSection; credentials: AgentCredentials } | undefined;
  let gate: MetricPushGate | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  const routes = agentRoutes({
    credentials: () => credentials,
    gate: () => gate,
    queue,
    results,
    reports: host.store.map<AgentReportSummary>(AGENT_REPORTS_MAP),
    metrics,
    log: host.log,
    now: () => host.now(),
  });
  return {
    routes,
    queue,
    results,
    connectMetricGate(g) {
      gate = g;
    },
    prepare(config): EnvPart {
      // Token files are read at every reload, so a rotated token applies with the configuration.
      prepared = { config, credentials: new AgentCredentials(config.agents.credentials, agentTokens(config.agents, host.file)) };
      return { probes: config.agents.credentials.length > 0 ? queue : undefined };
    },
    commit(config) {
      if (prepared?.config === config) credentials = prepared.credentials;
      queue.configure(config.agents.probes);
      results.maxEntries = config.agents.probes.maxNetworks * Math.max(1, new Set(credentials.identities().map((a) => a.group)).size);
    },
    run() {
      sweeper = setInterval(() => results.sweep(host.now()), SWEEP_MS);
      sweeper.unref();
    },
    stop() {
      clearInterval(sweeper);
      queue.stop();
      return Promise.resolve();
    },
    describe() {
      return { agents: credentials.size };
    },
  };
}
