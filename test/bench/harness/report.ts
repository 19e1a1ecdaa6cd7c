import type { SampleDetails } from './benchGroup.js';

/** Every sample of one row, as recorded by its group. */
export interface RowSamples {
  readonly id: string;
  readonly label: string;
  readonly group: string;
  readonly values: number[];
  readonly details: SampleDetails[];
  /** Why the row has no samples (group failed, skipped for the budget), if it has none. */
  error?: string;
}

/** One comparison table as it is printed and stored. */
export interface TableSummary {
  readonly id: string;
  readonly title: string;
  readonly measure: string;
  readonly baseline: string;
  readonly rows: RowSummary[];
}

/** One row: median of the runs, spread, ratio to the table's baseline, median details. */
export interface RowSummary {
  readonly id: string;
  readonly label: string;
  readonly group: string;
  readonly runs: number;
  readonly median: number | null;
  readonly min: number | null;
  readonly max: number | null;
  /** median / baseline median; null when either has no samples. */
  readonly ratio: number | null;
  readonly details: Readonly<Record<string, number>>;
  readonly samples: readonly number[];
  readonly error?: string;
}

/** Median of a non-empty list (mean of the middle two for even lengths). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Summarises one table's rows (in the given order) against its baseline row. */
export function summariseTable(id: string, title: string, measure: string, baseline: string, rows: readonly RowSamples[]): TableSummary {
  const base = rows.find((r) => r.id === baseline);
  const baseMedian = base && base.values.length > 0 ? median(base.values) : null;
  return {
    id,
    title,
    measure,
    baseline,
    rows: rows.map((r) => {
      const has = r.values.length > 0;
      const m = has ? median(r.values) : null;
      const details: Record<string, number> = {};
      for (const key of new Set(r.details.flatMap((d) => Object.keys(d)))) {
        const vs = r.details.map((d) => d[key]).filter((v): v is number => v !== undefined && Number.isFinite(v));
        if (vs.length > 0) details[key] = median(vs);
      }
      return {
        id: r.id,
        label: r.label,
        group: r.group,
        runs: r.values.length,
        median: m,
        min: has ? Math.min(...r.values) : null,
        max: has ? Math.max(...r.values) : null,
        ratio: m !== null && baseMedian ? m / baseMedian : null,
        details,
        samples: [...r.values],
        ...(r.error !== undefined ? { error: r.error } : {}),
      };
    }),
  };
}

/** 3 significant digits with k/M/G suffixes: 1234567 → `1.23M`, 45210 → `45.2k`, 2.137 → `2.14`. */
export function formatQuantity(v: number): string {
  const abs = Math.abs(v);
  const [scaled, suffix] = abs >= 1e9 ? [v / 1e9, 'G'] : abs >= 1e6 ? [v / 1e6, 'M'] : abs >= 1e4 ? [v / 1e3, 'k'] : [v, ''];
  const digits = Math.abs(scaled) >= 100 ? 0 : Math.abs(scaled) >= 10 ? 1 : 2;
  return `${scaled.toFixed(digits)}${suffix}`;
}

/**
 * The one comparison table as Markdown (readable in a terminal; the groups' sections of
 * docs/BENCHMARKS.md are made of it, harness/benchPage.ts): table, row, measure, median of the
 * runs, min–max spread, ratio to the table's baseline, and median details.
 */
export function renderMarkdown(tables: readonly TableSummary[]): string {
  const lines = ['| table | row | measure | median | spread (min–max) | runs | × baseline | details |', '|---|---|---|---:|---:|---:|---:|---|'];
  for (const t of tables) {
    t.rows.forEach((r, i) => {
      const table = i === 0 ? t.title : '';
      const isBase = r.id === t.baseline;
      const ratio = r.ratio === null ? '–' : isBase ? '1.00 (baseline)' : r.ratio.toFixed(r.ratio < 0.1 ? 3 : 2);
      const med = r.median === null ? (r.error ? `failed: ${r.error}` : '–') : formatQuantity(r.median);
      const spread = r.min === null ? '–' : `${formatQuantity(r.min)}–${formatQuantity(r.max!)}`;
      const details = Object.entries(r.details)
        .map(([k, v]) => `${k}: ${formatQuantity(v)}`)
        .join(', ');
      lines.push(`| ${table} | ${r.label} | ${t.measure} | ${med} | ${spread} | ${r.runs} | ${ratio} | ${details} |`);
    });
  }
  return lines.join('\n');
}
