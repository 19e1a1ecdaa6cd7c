import { Counter, Gauge, type Registry } from 'prom-client';
import type { RouteSink } from '../../core/contracts/adminRoute.js';
import type { MetricsConfig } from './metricsSchema.js';
import type { MetricSource } from '../../core/views/metricView.js';
import { METRIC_CATALOG, METRIC_SOURCES } from './catalog.js';
import { validateBatch, type BatchSink, type IngestProblem } from './ingest.js';
import type { MetricStore } from './metricStore.js';

/** What the metric routes need. */
export interface MetricRouteDeps {
  readonly store: MetricStore;
  /** The running metrics configuration (cadence per source), read at request time so reloads show. */
  readonly config: () => MetricsConfig;
  readonly registry: Registry;
  /** Clock (ms since the epoch); samples are stamped with their arrival time. */
  readonly now: () => number;
  /** Where a validated batch goes (default: straight into `store`). */
  readonly apply?: BatchSink;
}

/**
 * The push API's gate as other parts of the engine call it (the agent API, wired by the
 * composition root): a batch validated exactly as `POST /metrics/<source>` validates it, and, when
 * valid, a `commit` that applies it (stamped with the engine's clock at the commit and with
 * `origin`) and counts it. A rejected batch is counted at once. Validating several batches before
 * committing any lets a caller apply them all or none.
 */
export type MetricPushGate = (source: MetricSource, body: unknown, origin?: string) => GatedBatch;

/** What {@link MetricPushGate} gives: a batch ready to commit, or why it was rejected. */
export type GatedBatch =
  | { readonly ok: true; readonly accepted: number; commit(): void }
  | { readonly ok: false; readonly status: 400 | 422; readonly problems: readonly IngestProblem[] };

/**
 * Registers the metric push routes on the admin listener (docs/PRODUCT.md §7 "metric push endpoints for
 * agents"):
 * - `POST /metrics/host`, `POST /metrics/service`, `POST /metrics/client` (admin token): a JSON
 *   batch `{"samples": [...]}`; 200 `{accepted}` when every sample was applied, else the whole
 *   batch is rejected: 400 (malformed, NaN, negative, out of range, unknown key, bad network) or
 *   422 (unknown data center or service), each problem with its path (`samples[2].cpu`);
 * - `GET /metrics/sources`: each source's metrics with units, cadence and staleness, the client
 *   network lengths and the store's counts, so agents can learn what to send and how often.
 *
 * Prometheus: `gslbd_metric_pushes_total{source,result}`, `gslbd_metric_samples_total{source}`,
 * `gslbd_metric_client_networks`, `gslbd_metric_client_evictions_total`.
 * @returns the routes' gate, for pushes that arrive another way (the agent API).
 */
export function registerMetricRoutes(admin: RouteSink, deps: MetricRouteDeps): MetricPushGate {
  const { store } = deps;
  const pushes = new Counter({
    name: 'gslbd_metric_pushes_total',
    help: 'Metric push requests, by source and result (accepted, invalid, unknown_reference)',
    labelNames: ['source', 'result'] as const,
    registers: [deps.registry],
  });
  const samples = new Counter({
    name: 'gslbd_metric_samples_total',
    help: 'Metric samples applied to the store, by source',
    labelNames: ['source'] as const,
    registers: [deps.registry],
  });
  let evictionsSeen = 0;
  new Counter({
    name: 'gslbd_metric_client_evictions_total',
    help: 'Client networks dropped from the metric store by its LRU bound',
    registers: [deps.registry],
    collect() {
      const now = store.stats().clientEvictions;
      if (now > evictionsSeen) this.inc(now - evictionsSeen);
      evictionsSeen = now;
    },
  });
  new Gauge({
    name: 'gslbd_metric_client_networks',
    help: 'Client networks with metrics in the store',
    registers: [deps.registry],
    collect() {
      this.set(store.stats().clientNetworks);
    },
  });

  const apply: BatchSink = deps.apply ?? ((src, writes, at, origin) => store.apply(src, writes, at, origin));
  const gate: MetricPushGate = (source, body, origin) => {
    const valid = validateBatch(store, source, body);
    if (!valid.ok) {
      pushes.inc({ source, result: valid.status === 400 ? 'invalid' : 'unknown_reference' });
      return valid;
    }
    return {
      ok: true,
      accepted: valid.writes.length,
      commit() {
        apply(source, valid.writes, deps.now(), origin);
        pushes.inc({ source, result: 'accepted' });
        samples.inc({ source }, valid.writes.length);
      },
    };
  };

  for (const source of METRIC_SOURCES) {
    admin.route({
      method: 'POST',
      path: `/metrics/${source}`,
      mutating: true,
      handle({ body }) {
        const outcome = gate(source, body);
        if (outcome.ok) {
          outcome.commit();
          return { status: 200, json: { accepted: outcome.accepted } };
        }
        return { status: outcome.status, json: { error: `${source} metrics rejected; nothing was applied`, problems: outcome.problems } };
      },
    });
  }

  admin.route({
    method: 'GET',
    path: '/metrics/sources',
    mutating: false,
    handle() {
      const cfg = deps.config();
      const describe = (source: MetricSource) => ({
        intervalSeconds: cfg[source].intervalSeconds,
        staleAfterSeconds: cfg[source].staleAfterSeconds,
        metrics: METRIC_CATALOG[source].map((m) => ({ name: m.name, unit: m.unit })),
      });
      return {
        status: 200,
        json: {
          host: describe('host'),
          service: describe('service'),
          client: { ...describe('client'), ipv4Prefix: cfg.client.ipv4Prefix, ipv6Prefix: cfg.client.ipv6Prefix, maxNetworks: cfg.client.maxNetworks },
          store: store.stats(),
        },
      };
    },
  });
  return gate;
}
