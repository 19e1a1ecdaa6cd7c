import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { CounterRates } from './counterRate.js';
import type { PrometheusSourceConfig, SeriesMapping } from './prometheusSchema.js';

/** What one scrape gives: host fields and service samples (push API shapes without `dc`). */
export interface PrometheusReading {
  readonly host?: Readonly<Record<string, number | string>>;
  readonly services?: readonly Readonly<Record<string, number | string>>[];
}

/**
 * The Prometheus source (docs/PRODUCT.md §3): scrapes one `/metrics` endpoint in the text
 * exposition format (parsed by `parse-prometheus-text-format`), and maps series to host or
 * service metrics (`prometheusSchema.ts`). A mapping whose series is missing from a scrape, or has
 * no matching sample, yields no value that cycle — the metric goes stale on the engines rather
 * than reading 0. Histogram and summary families carry no single value and never match.
 */
export class PrometheusSource {
  private readonly rates = new CounterRates();

  constructor(
    private readonly config: PrometheusSourceConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** `prometheus:<url>`, for logs and metrics. */
  get name(): string {
    return `prometheus:${this.config.url}`;
  }

  /**
   * One scrape: host fields and service samples for the mappings that found their series.
   * @throws Error when the endpoint is unreachable, answers other than 200, exceeds the timeout, or is not the text format.
   */
  async read(): Promise<PrometheusReading> {
    const res = await fetch(this.config.url, {
      signal: AbortSignal.timeout(this.config.timeoutSeconds * 1000),
      headers: { accept: 'text/plain; version=0.0.4' },
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${this.config.url}: HTTP ${res.status}`);
    return this.map(text, this.now());
  }

  /**
   * Maps one exposition text read at `atMs` (the scrape time, for rates).
   * @throws Error when the text is not the Prometheus text format.
   */
  map(text: string, atMs: number): PrometheusReading {
    const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
    const host: Record<string, number | string> = {};
    const services = new Map<string, Record<string, number | string>>();
    this.config.metrics.forEach((m, i) => {
      const values = (families.get(m.series)?.metrics ?? [])
        .filter((s) => s.value !== undefined && Object.entries(m.match).every(([k, v]) => s.labels?.[k] === v))
        .map((s) => Number(s.value))
        .filter((v) => Number.isFinite(v));
      if (values.length === 0) return;
      let value: number | undefined = aggregate(m.aggregate, values) * m.scale;
      if (m.rate) value = this.rates.rate(String(i), value, atMs);
      if (value === undefined || value < 0) return;
      const name = m.host ?? m.metric!;
      const converted = convert(name, value);
      if (m.host !== undefined) host[name] = converted;
      else services.set(m.service!, { ...(services.get(m.service!) ?? { service: m.service! }), [name]: converted });
    });
    return { ...(Object.keys(host).length > 0 ? { host } : {}), ...(services.size > 0 ? { services: [...services.values()] } : {}) };
  }
}

function aggregate(kind: SeriesMapping['aggregate'], values: readonly number[]): number {
  switch (kind) {
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'max':
      return Math.max(...values);
  }
}

/** The push API's form of a value: `status` as up/down, counts as whole numbers, others with three decimals. */
function convert(metric: string, value: number): number | string {
  if (metric === 'status') return value > 0 ? 'up' : 'down';
  if (metric === 'healthyBackends' || metric === 'connection') return Math.round(value);
  return Math.round(value * 1000) / 1000;
}
