/**
 * Read-only view of live metrics (host, service and client sources, SPEC §3) with explicit
 * staleness. The metric store (multi-source issue) implements it; until then it holds nothing.
 */

/** Where a metric comes from: the DC platform, a service in a DC, or the path to a client network. */
export type MetricSource = 'host' | 'service' | 'client';

/** A metric value with its age, so a rank stage can apply the record's staleness rule. */
export interface MetricSample {
  readonly value: number;
  /** Milliseconds since the sample was taken. */
  readonly ageMs: number;
}

export interface MetricView {
  /**
   * The latest sample of `metric` for `key` (a DC name for host metrics, `service/dc` for service
   * metrics, `network/dc` for client metrics), or undefined when none was ever received.
   */
  sample(source: MetricSource, key: string, metric: string, nowMs: number): MetricSample | undefined;
}

/** A view with no metrics at all. */
export const emptyMetricView: MetricView = {
  sample: () => undefined,
};
