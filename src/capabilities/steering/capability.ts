import type { AdminRoute } from '../../core/adminRoute.js';
import type { Capability, CapabilityHost, CapabilityRuntime, EnvPart } from '../../pipeline/capability.js';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import { MetricStore } from './metricStore.js';
import { metricsSchema, type MetricsConfig } from './metricsSchema.js';
import { multiSourceStages } from './multiSourceStages.js';
import { isMultiSource, multiSourcePolicySchema } from './multiSourcePolicySchema.js';
import { registerMetricRoutes } from './pushRoutes.js';

/** The parts of the configuration steering reads. */
export interface SteeringConfig {
  readonly metrics: MetricsConfig;
  readonly datacenters: readonly { readonly name: string }[];
  readonly services: readonly { readonly name: string }[];
  readonly records: readonly GslbRecordConfig[];
}

/** A started steering capability: its runtime and the metric store (the snapshot's metric view). */
export interface SteeringRuntime extends CapabilityRuntime<SteeringConfig> {
  /** Host, service and client metrics; `host.status` / `service.status` also take monitor verdicts. */
  readonly store: MetricStore;
  readonly routes: readonly AdminRoute[];
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
      metrics: metricsSchema.prefault({}),
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
      store.configure(config.metrics, config.datacenters.map((d) => d.name), config.services.map((s) => s.name));
      running = config.metrics;
    };
    const routes: AdminRoute[] = [];
    registerMetricRoutes({ route: (r) => routes.push(r) }, { store, config: () => running!, registry: host.metrics.registry, now: () => host.now() });
    return {
      store,
      routes,
      prepare(config): EnvPart {
        // The first configuration applies at once (nothing runs yet); a reload's once its snapshot is published.
        if (running === undefined) configure(config);
        return { metrics: store };
      },
      commit: configure,
    };
  },
} satisfies Capability<SteeringConfig>;
