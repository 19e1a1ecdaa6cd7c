/**
 * Types of `parse-prometheus-text-format` (it ships none): the Prometheus text exposition parsed
 * into metric families, in prom2json's shape. Counter, gauge and untyped samples carry `value`
 * (text: `"1027"`, `"+Inf"`, `"NaN"`); histogram and summary samples carry `buckets` or
 * `quantiles` with `count` and `sum` instead. `labels` is absent for a sample without labels.
 */
declare module 'parse-prometheus-text-format' {
  interface PrometheusSample {
    readonly value?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly buckets?: Readonly<Record<string, string>>;
    readonly quantiles?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }
  interface PrometheusFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly PrometheusSample[];
  }
  /** @throws Error when the text is not the Prometheus text format. */
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
