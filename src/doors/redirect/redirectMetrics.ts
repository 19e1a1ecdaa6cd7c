import { Counter, type Registry } from 'prom-client';

/**
 * Prometheus metrics of the redirect door, on the engine's registry. Labels come from the
 * configuration (hosts, data center names) and HTTP statuses, never from the request: a request
 * for a host that is not configured counts with `host=""`, a reply without a site with `dc=""`.
 * Decisions also count in `gslbd_dc_answers_total{dc}` (the data center redirected to) and, one
 * engine call in 16, in `gslbd_resolve_duration_seconds`, as DNS answers do.
 */
export class RedirectMetrics {
  /** Replies by configured host, data center redirected to, and HTTP status. */
  readonly requests: Counter<'host' | 'dc' | 'status'>;
  /** Connections closed at once because `maxConnections` were open. */
  readonly dropped: Counter;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'gslbd_redirect_requests_total',
      help: 'HTTP redirect door replies, by configured host, data center redirected to and status',
      labelNames: ['host', 'dc', 'status'] as const,
      registers: [registry],
    });
    this.dropped = new Counter({
      name: 'gslbd_redirect_connections_dropped_total',
      help: 'HTTP redirect door connections closed at once because maxConnections were open',
      registers: [registry],
    });
  }
}
