import type { AdminRoute } from '../../core/contracts/adminRoute.js';
import type { Capability, CapabilityHost, CapabilityRuntime, EnvPart } from '../../pipeline/capability.js';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import type { MetricSource } from '../../core/views/metricView.js';
import { MetricStore, type MetricWrite } from './metricStore.js';
import { metricsSchema, type MetricsConfig } from './metricsSchema.js';
import { multiSourceStages } from './multiSourceStages.js';
import { isMultiSource, multiSourcePolicySchema } from './multiSourcePolicySchema.js';
import { registerMetricRoutes, type MetricPushGate } from './pushRoutes.js';

/** The parts of the configuration steering reads. */
export interface SteeringConfig {
  readonly metrics: MetricsConfig;
  readonly datacenters: readonly { readonly name: string }[];
  readonly services: readonly { readonly name: string }[];
  readonly records: readonly GslbRecordConfig[];
}

/** The state-store map of pushed batches: the last validated batch per source (`host`, `service`, `client`) and node (`host|ns1`). */
export const PUSHES_MAP = 'steering.pushes';

/** One validated push as the state store keeps it (an absent metric value is `undefined`, `null` in JSON). */
export interface PushedBatch {
  readonly writes: readonly MetricWrite[];
  /** When the engine received it (ms since the epoch): staleness counts from here. */
  readonly atMs: number;
  /** Who reported it: an agent's name (the agent API); absent for a push with the admin token. */
  readonly origin?: string;
}

/** A started steering capability: its runtime and the metric store (the snapshot's metric view). */
export interface SteeringRuntime extends CapabilityRuntime<SteeringConfig> {
  /** Host, service and client metrics; `host.status` / `service.status` also take monitor verdicts. */
  readonly store: MetricStore;
  readonly routes: readonly AdminRoute[];
  /** The push API's validation and commit, for batches that arrive another way (the agent API). */
  readonly gate: MetricPushGate;
  prepare(config: SteeringConfig, refresh: boolean): EnvPart;
  commit(config: SteeringConfig): void;
}

/**
 * Multi-source selection (seed 004, docs/PRODUCT.md §3): host, service and client metrics pushed by agents
 * (`metrics` section, `POST /metrics/*`) and the `multi-source` selection policy that ranks data
 * centers by one of them (README.md). Its runtime keeps the metric store: it is the snapshot's
 * metric view, updated in place by each validated push; a reload reconfigures it once the new
 * snapshot is published.
 */
export const steeringCapability = {
  name: 'steering',
  schema: {
    root: {
      metrics: metricsSchema.prefault({}).describe('Cadence and staleness of the host, service and client metrics agents push, per source.'),
    },
    policies: (common) => [multiSourcePolicySchema(common)],
  },
  checkPolicy(policy, refs, issue) {
    if (isMultiSource(policy) && policy.service !== undefined && !refs.services.has(policy.service)) issue(['service'], `unknown service "${policy.service}"`);
  },
  stages({ record }) {
    return isMultiSource(record.policy) ? multiSourceStages(record.policy, record.service) : [];
  },
  start(host: CapabilityHost): SteeringRuntime {
    const store = new MetricStore(metricsSchema.parse({}), [], []);
    let running: MetricsConfig | undefined;
    const configure = (config: SteeringConfig): void => {
      store.configure(
        config.metrics,
        config.datacenters.map((d) => d.name),
        config.services.map((s) => s.name),
      );
      running = config.metrics;
    };
    // Validated pushes go to the state store, and the metric store applies what it sees there: in
    // this process at once (inside the push), on a shared store also the pushes of other nodes.
    // Keyed by source and node (`host|ns1`): a node's batch never hides another node's batch
    // that its watchers have not applied yet.
    const pushes = host.store.map<PushedBatch>(PUSHES_MAP);
    pushes.watch((key, batch) => {
      if (batch) store.apply(key.split('|')[0] as MetricSource, batch.writes, batch.atMs, batch.origin);
    });
    const apply = (source: MetricSource, writes: readonly MetricWrite[], atMs: number, origin?: string): void =>
      pushes.set(`${source}|${host.store.node}`, origin === undefined ? { writes, atMs } : { writes, atMs, origin });
    const routes: AdminRoute[] = [];
    const gate = registerMetricRoutes(
      { route: (r) => routes.push(r) },
      { store, config: () => running!, registry: host.metrics.registry, now: () => host.now(), apply },
    );
    return {
      store,
      routes,
      gate,
      prepare(config): EnvPart {
        // The first configuration applies at once (nothing runs yet); a reload's once its snapshot is published.
        if (running === undefined) configure(config);
        return { metrics: store };
      },
      commit: configure,
    };
  },
} satisfies Capability<SteeringConfig>;
