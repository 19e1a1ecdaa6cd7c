import type { MetricSource } from '../../core/views/metricView.js';

/**
 * The metrics each source offers (seed 004, docs/PRODUCT.md §3: five host metrics, eight service metrics, four
 * client metrics), with their units and the range ingestion accepts. A metric's id is its
 * position in its source's list; the store keeps samples in arrays indexed by id.
 */
export interface MetricSpec {
  readonly name: string;
  /** Unit as written in documentation and error messages. */
  readonly unit: string;
  /** Largest accepted value (inclusive); the smallest is always 0 (1 for MOS). */
  readonly max: number;
  readonly min: number;
  /** Whole numbers only (counts). */
  readonly integer: boolean;
}

const percent = (name: string): MetricSpec => ({ name, unit: 'percent', min: 0, max: 100, integer: false });
const rate = (name: string, unit: string): MetricSpec => ({ name, unit, min: 0, max: Number.MAX_VALUE, integer: false });
const count = (name: string, max = Number.MAX_SAFE_INTEGER): MetricSpec => ({ name, unit: 'count', min: 0, max, integer: true });
/** `status` is stored as 1 (up) or 0 (down); ingestion takes the words "up" and "down". */
const status: MetricSpec = { name: 'status', unit: 'up|down', min: 0, max: 1, integer: true };

/** Metrics per source, in id order. */
export const METRIC_CATALOG: Readonly<Record<MetricSource, readonly MetricSpec[]>> = {
  host: [percent('cpu'), percent('mem'), rate('bw', 'bits/s'), status, percent('packetLoss')],
  service: [
    percent('cpu'),
    percent('mem'),
    rate('bw', 'bits/s'),
    rate('request', 'requests/s'),
    count('connection'),
    rate('session_new', 'sessions/s'),
    status,
    count('healthyBackends'),
  ],
  client: [count('hops', 255), { name: 'mos', unit: 'MOS (1–5)', min: 1, max: 5, integer: false }, percent('packetLoss'), count('ttl', 255)],
};

export const METRIC_SOURCES: readonly MetricSource[] = ['host', 'service', 'client'];

/** The id of `name` in `source`, or −1 when the source has no such metric. */
export function metricId(source: MetricSource, name: string): number {
  return METRIC_CATALOG[source].findIndex((m) => m.name === name);
}

/** The id of `status` in a source, or −1 (client metrics have no status). */
export function statusId(source: MetricSource): number {
  return metricId(source, 'status');
}

/** "cpu, mem, bw, status, packetLoss" — for error messages. */
export function metricNames(source: MetricSource): string {
  return METRIC_CATALOG[source].map((m) => m.name).join(', ');
}
