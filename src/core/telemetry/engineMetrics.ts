import { RCODE_NAMES } from '../dns/rcode.js';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { BucketHistogram, type BucketCell } from './bucketHistogram.js';

/**
 * The engine's Prometheus metrics (prom-client). Labels never carry client addresses or query
 * names, so cardinality stays bounded by configuration (data centers, rcodes, transports).
 * Other capabilities register their own metrics on `registry`.
 */
export class EngineMetrics {
  readonly registry = new Registry();

  /** Counts of {@link queries} kept in plain numbers ({@link countQuery}), added at scrape time. */
  private readonly queryCounts = new DeferredCounts<'transport' | 'rcode'>();
  /** Counts of {@link dcAnswers} kept in plain numbers ({@link countDc}), added at scrape time. */
  private readonly dcCounts = new DeferredCounts<'dc'>();

  /** DNS queries answered, by front door transport and response code name. */
  readonly queries = new Counter({
    name: 'gslbd_dns_queries_total',
    help: 'DNS queries answered, by transport and rcode',
    labelNames: ['transport', 'rcode'] as const,
    registers: [this.registry],
    collect: addDeferred(this.queryCounts),
  });

  /** GSLB answers that named a data center. */
  readonly dcAnswers = new Counter({
    name: 'gslbd_dc_answers_total',
    help: 'GSLB selections that answered with endpoints of a data center',
    labelNames: ['dc'] as const,
    registers: [this.registry],
    collect: addDeferred(this.dcCounts),
  });

  /** Time spent in resolve() per query (seconds); observed only through {@link resolveTimes}. */
  readonly resolveSeconds = new BucketHistogram({
    name: 'gslbd_resolve_duration_seconds',
    help: 'Time spent in resolve() per query',
    buckets: [1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 5e-4, 1e-3, 1e-2],
    registry: this.registry,
  });

  /**
   * Where front doors record resolve() durations (s) for {@link resolveSeconds}: a bucket search
   * and three additions, exported at scrape time. prom-client's own `observe` (a label object
   * built, validated and hashed per call, cold code when only every 16th query is timed) showed
   * in CPU profiles of the compact engine under dnsperf at ~3.5 % of its time.
   */
  readonly resolveTimes: BucketCell = this.resolveSeconds.cell();

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

  private readonly queryCells = new Map<string, CountCell[]>();
  private readonly dcCells = new Map<string, CountCell>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Counts one answered query in `gslbd_dns_queries_total` the cheap way (a number per
   * transport and rcode, added at scrape time): for front doors' query paths.
   */
  countQuery(transport: string, rcode: number): void {
    let byRcode = this.queryCells.get(transport);
    if (!byRcode) {
      byRcode = [];
      this.queryCells.set(transport, byRcode);
    }
    (byRcode[rcode] ??= this.queryCounts.cell({ transport, rcode: RCODE_NAMES[rcode] ?? String(rcode) })).n++;
  }

  /** Counts one GSLB answer with endpoints of data center `dc` in `gslbd_dc_answers_total`, the cheap way. */
  countDc(dc: string): void {
    let cell = this.dcCells.get(dc);
    if (!cell) {
      cell = this.dcCounts.cell({ dc });
      this.dcCells.set(dc, cell);
    }
    cell.n++;
  }
}

/** A count by one set of label values; the query path increments `n`. */
export interface CountCell {
  n: number;
}

/**
 * Counts by label values kept in plain numbers on the query path and added to a prom-client
 * counter when it is scraped. prom-client hashes the label object on every `inc`, which costs a
 * front door as much as a cheap answer; a front door instead looks up its cell once per label
 * value and increments a number. Label values must be bounded (configuration, rcodes).
 */
export class DeferredCounts<L extends string> {
  private readonly cells = new Map<string, { labels: Partial<Record<L, string>>; cell: CountCell; added: number }>();

  /** The cell counting `labels` (the same cell for the same values). */
  cell(labels: Partial<Record<L, string>>): CountCell {
    const key = JSON.stringify(labels);
    let entry = this.cells.get(key);
    if (!entry) {
      entry = { labels, cell: { n: 0 }, added: 0 };
      this.cells.set(key, entry);
    }
    return entry.cell;
  }

  /** Adds what was counted since the last call to `counter`. */
  addTo(counter: Counter<L>): void {
    for (const e of this.cells.values()) {
      if (e.cell.n === e.added) continue;
      counter.inc(e.labels, e.cell.n - e.added);
      e.added = e.cell.n;
    }
  }
}

/** A counter's `collect` that adds deferred counts before each scrape. */
function addDeferred<L extends string>(counts: DeferredCounts<L>): (this: Counter<L>) => void {
  return function addCounts(this: Counter<L>) {
    counts.addTo(this);
  };
}
