import { Histogram, type LabelValues, type MetricObjectWithValues, type MetricType, type MetricValueWithName, type Registry } from 'prom-client';

/** One label combination of a {@link BucketHistogram}: observing costs a bucket search and three additions. */
export class BucketCell {
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Records one value (for a duration: seconds). */
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

/**
 * A prom-client histogram whose label combinations are fixed cells counted in typed arrays and
 * exported at scrape time, with prom-client's exposition (cumulative `_bucket{le}`, `+Inf`,
 * `_sum`, `_count`). prom-client's own `observe` builds, validates and hashes a label object per
 * call; health checks observe twice per check (duration, schedule lag), 4,000 times a second at
 * 10,000 endpoints (docs/BENCHMARKS-HISTORY.md, health). Observe only through {@link cell}.
 */
export class BucketHistogram<L extends string = string> extends Histogram<L> {
  private readonly bounds: readonly number[];
  private readonly cells = new Map<string, { labels: LabelValues<L>; cell: BucketCell }>();

  constructor(private readonly config: { name: string; help: string; labelNames?: readonly L[]; buckets: readonly number[]; registry: Registry }) {
    super({ name: config.name, help: config.help, labelNames: config.labelNames ?? [], buckets: [...config.buckets], registers: [config.registry] });
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** The cell of `labels` (the same cell for the same values); keep it and observe on it. */
  cell(labels: LabelValues<L> = {}): BucketCell {
    const key = JSON.stringify(labels);
    let entry = this.cells.get(key);
    if (!entry) this.cells.set(key, (entry = { labels, cell: new BucketCell(this.bounds) }));
    return entry.cell;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    const { name, help } = this.config;
    const values: MetricValueWithName<L>[] = [];
    for (const { labels, cell } of this.cells.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += cell.counts[i]!;
        values.push({ labels: { le: bound, ...labels } as LabelValues<L>, value: cumulative, metricName: `${name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels } as LabelValues<L>, value: cell.count, metricName: `${name}_bucket` });
      values.push({ labels, value: cell.sum, metricName: `${name}_sum` });
      values.push({ labels, value: cell.count, metricName: `${name}_count` });
    }
    // prom-client's typings declare `type` a numeric enum; its runtime and registry use the name.
    return { name, help, type: 'histogram' as unknown as MetricType, aggregator: 'sum', collect: () => undefined, values };
  }

  /** What the registry formats (prom-client prefers it over `get`). */
  getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<L>>> {
    return this.get();
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    if (this.cells === undefined) return;
    for (const { cell } of this.cells.values()) {
      cell.counts.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}
