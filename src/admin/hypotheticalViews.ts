import { metricId, statusId } from '../capabilities/steering/catalog.js';
import type { GslbEndpoint } from '../core/model/topology.js';
import type { EndpointHealth, HealthStatus, HealthView } from '../core/views/healthView.js';
import { clientNetworkKey, type MetricReading, type MetricSource, type MetricView } from '../core/views/metricView.js';
import { parseIp } from '../core/net/ipAddress.js';
import type { WhatIf } from './whatIfSchema.js';

/** The data center of an endpoint key (`service/dc/address`). */
function dcOfKey(key: string): string {
  return key.split('/')[1] ?? '';
}

/**
 * A health view with a hypothesis laid over a live one, without changing it: an endpoint set down
 * (or inside a data center set down) reads as an operator's `force-down` override, one set up as
 * `force-up` — exactly what `POST /health/override` would publish, so the health gate decides as
 * it would after the real override (src/capabilities/health/README.md); a data center set down
 * also has `host.status` down. Service status per data center is recomputed as the health monitor
 * computes it (up when one endpoint is up or forced up) for the pairs a hypothesis touches, once
 * {@link HypotheticalHealthView.know} was given the endpoints of the snapshot it serves.
 * `down` wins over `up` when both name the same target.
 */
export class HypotheticalHealthView implements HealthView {
  private readonly byPair = new Map<string, string[]>();

  constructor(
    private readonly base: HealthView,
    private readonly w: WhatIf,
  ) {}

  /** Records the endpoint keys of the snapshot this view serves (service status of touched pairs is computed from them). Call once, before any query. */
  know(keys: Iterable<string>): void {
    for (const key of keys) {
      const [service, dc] = key.split('/');
      const pair = `${service}/${dc}`;
      const list = this.byPair.get(pair);
      if (list) {
        if (!list.includes(key)) list.push(key);
      } else this.byPair.set(pair, [key]);
    }
  }

  private overrideOf(key: string): 'force-down' | 'force-up' | undefined {
    const dc = dcOfKey(key);
    if (this.w.down.endpoints.includes(key) || this.w.down.dcs.includes(dc)) return 'force-down';
    if (this.w.up.endpoints.includes(key) || this.w.up.dcs.includes(dc)) return 'force-up';
    return undefined;
  }

  endpointUp(endpoint: GslbEndpoint): boolean {
    const o = this.overrideOf(endpoint.key);
    if (o === 'force-up') return true;
    if (o === 'force-down') return false;
    return this.base.endpointUp(endpoint);
  }

  endpointHealth(key: string): EndpointHealth {
    const h = this.base.endpointHealth(key);
    const o = this.overrideOf(key);
    return o === undefined ? h : { ...h, override: o };
  }

  hostStatus(dc: string): HealthStatus {
    if (this.w.down.dcs.includes(dc)) return 'down';
    if (this.w.up.dcs.includes(dc)) return 'up';
    return this.base.hostStatus(dc);
  }

  serviceStatus(service: string, dc: string): HealthStatus {
    const keys = this.byPair.get(`${service}/${dc}`);
    if (keys === undefined || !keys.some((k) => this.overrideOf(k) !== undefined)) return this.base.serviceStatus(service, dc);
    let result: HealthStatus = 'down';
    for (const key of keys) {
      const h = this.endpointHealth(key);
      const s: HealthStatus = h.override === 'force-up' ? 'up' : h.override ? 'down' : h.status;
      if (s === 'up') return 'up';
      if (s === 'unknown') result = 'unknown';
    }
    return result;
  }

  get description(): string {
    return `what-if over: ${this.base.description}`;
  }
}

/** Who a hypothetical metric reading is reported by, in `/explain`. */
export const WHAT_IF_ORIGIN = 'what-if';

/**
 * A metric view with a hypothesis laid over a live one, without changing it: the metric values
 * given, and the `status` metric of the data centers and (service, data center) pairs the health
 * hypothesis touches (what the monitors' verdicts become through the status agreement rule,
 * docs/PRODUCT.md §3). Everything else reads through to the live view.
 * @throws Error (from the constructor) naming an unknown metric or client address.
 */
export class HypotheticalMetricView implements MetricView {
  private readonly values = new Map<string, number>();
  readonly clientNetworkPrefix: MetricView['clientNetworkPrefix'];

  constructor(
    private readonly base: MetricView,
    w: WhatIf,
    private readonly health: HypotheticalHealthView,
  ) {
    this.clientNetworkPrefix = base.clientNetworkPrefix;
    for (const m of w.metrics) {
      const id = metricId(m.source, m.metric);
      if (id < 0) throw new Error(`unknown ${m.source} metric "${m.metric}"`);
      const subject = m.source === 'host' ? '' : m.source === 'service' ? m.service! : clientNetworkKey(parseIp(m.client!), base.clientNetworkPrefix);
      this.values.set(keyOf(m.source, subject, m.dc, id), m.value);
    }
    this.statusDcs = new Set([...w.down.dcs, ...w.up.dcs]);
    this.statusPairs = new Set([...w.down.endpoints, ...w.up.endpoints].map((k) => k.split('/').slice(0, 2).join('/')));
  }

  private readonly statusDcs: Set<string>;
  private readonly statusPairs: Set<string>;

  read(source: MetricSource, subject: string | number, dc: string, metric: number, nowMs: number): number {
    const v = this.values.get(keyOf(source, subject, dc, metric));
    if (v !== undefined) return v;
    if (metric === statusId(source) && source !== 'client') {
      const s = source === 'host' ? (this.statusDcs.has(dc) ? this.health.hostStatus(dc) : undefined) : this.serviceStatus(String(subject), dc);
      if (s !== undefined && s !== 'unknown') return s === 'up' ? 1 : 0;
    }
    return this.base.read(source, subject, dc, metric, nowMs);
  }

  describe(source: MetricSource, subject: string | number, dc: string, metric: number, nowMs: number): MetricReading {
    const live = this.base.describe(source, subject, dc, metric, nowMs);
    const v = this.read(source, subject, dc, metric, nowMs);
    if (Number.isNaN(v) || v === this.base.read(source, subject, dc, metric, nowMs)) return live;
    return { value: v, ageMs: 0, state: 'fresh', reportedBy: WHAT_IF_ORIGIN };
  }

  private serviceStatus(service: string, dc: string): HealthStatus | undefined {
    return this.statusDcs.has(dc) || this.statusPairs.has(`${service}/${dc}`) ? this.health.serviceStatus(service, dc) : undefined;
  }
}

function keyOf(source: MetricSource, subject: string | number, dc: string, metric: number): string {
  return `${source}\u0000${typeof subject}\u0000${subject}\u0000${dc}\u0000${metric}`;
}
