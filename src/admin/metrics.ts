import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The engine's Prometheus metrics (prom-client). Labels never carry client addresses or query
 * names, so cardinality stays bounded by configuration (data centers, rcodes, transports).
 * Other capabilities register their own metrics on `registry`.
 */
export class EngineMetrics {
  readonly registry = new Registry();

  /** DNS queries answered, by front door transport and response code name. */
  readonly queries = new Counter({
    name: 'gslbd_dns_queries_total',
    help: 'DNS queries answered, by transport and rcode',
    labelNames: ['transport', 'rcode'] as const,
    registers: [this.registry],
  });

  /** GSLB answers that named a data center. */
  readonly dcAnswers = new Counter({
    name: 'gslbd_dc_answers_total',
    help: 'GSLB selections that answered with endpoints of a data center',
    labelNames: ['dc'] as const,
    registers: [this.registry],
  });

  /** Time spent in resolve() per query (seconds). */
  readonly resolveSeconds = new Histogram({
    name: 'gslbd_resolve_duration_seconds',
    help: 'Time spent in resolve() per query',
    buckets: [1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 5e-4, 1e-3, 1e-2],
    registers: [this.registry],
  });

  /** Dropped or malformed messages by reason class. */
  readonly malformed = new Counter({
    name: 'gslbd_dns_malformed_total',
    help: 'Messages dropped or answered with FORMERR/NOTIMP/BADVERS, by transport',
    labelNames: ['transport', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Configuration reloads by result. */
  readonly reloads = new Counter({
    name: 'gslbd_config_reloads_total',
    help: 'Configuration reload attempts, by result',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  /** Generation of the snapshot in use. */
  readonly generation = new Gauge({
    name: 'gslbd_snapshot_generation',
    help: 'Generation number of the snapshot queries run on',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}

/** Response code names for metric labels (RFC 1035 §4.1.1, RFC 6891 §9). */
export const RCODE_NAMES: Readonly<Record<number, string>> = {
  0: 'NOERROR',
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  16: 'BADVERS',
};
