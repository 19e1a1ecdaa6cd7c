import { RCODE_NAMES } from '../dns/rcode.js';
import { TYPE_CODES } from '../dns/records.js';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Answer, SelectedRecord } from '../model/query.js';
import { BucketHistogram, type BucketCell } from './bucketHistogram.js';
import { GSLBD_VERSION } from './buildInfo.js';
import { ClientAnswerSamples } from './clientAnswerSamples.js';

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

  /** Run before the query counters are exported ({@link beforeScrape}). */
  private readonly scrapeSources = new Set<() => void>();

  /** DNS queries answered, by front door transport and response code name. */
  readonly queries = new Counter({
    name: 'gslbd_dns_queries_total',
    help: 'DNS queries answered, by transport and rcode',
    labelNames: ['transport', 'rcode'] as const,
    registers: [this.registry],
    collect: this.afterSources(addDeferred(this.queryCounts)),
  });

  /** GSLB answers that named a data center. */
  readonly dcAnswers = new Counter({
    name: 'gslbd_dc_answers_total',
    help: 'GSLB selections that answered with endpoints of a data center',
    labelNames: ['dc'] as const,
    registers: [this.registry],
    collect: this.afterSources(addDeferred(this.dcCounts)),
  });

  /** Questions per query type, counted by {@link countQtype} in {@link qtypeCounts}. */
  private readonly qtypeCounts = new Float64Array(65536);
  private readonly qtypesAdded = new Float64Array(65536);

  /**
   * Questions by query type name: the types gslbd knows by name, every other type as `other`, so
   * a client spraying random types cannot grow the series.
   */
  readonly qtypes = new Counter({
    name: 'gslbd_dns_queries_by_qtype_total',
    help: 'Questions received by the front doors, by query type (types without a name here: other)',
    labelNames: ['qtype'] as const,
    registers: [this.registry],
    collect: this.afterSources(addQtypeCounts(this.qtypeCounts, this.qtypesAdded)),
  });

  /** Counts of {@link zoneQueries} kept in plain numbers ({@link countZone}), added at scrape time. */
  private readonly zoneCounts = new DeferredCounts<'zone'>();
  private readonly zoneCells = new Map<string, CountCell>();

  /** Questions by the zone holding their name (bounded by the configured zones). */
  readonly zoneQueries = new Counter({
    name: 'gslbd_dns_queries_by_zone_total',
    help: 'Questions answered from each zone (the zone holding the question name) by the standalone listener and the compact protocol',
    labelNames: ['zone'] as const,
    registers: [this.registry],
    collect: this.afterSources(addDeferred(this.zoneCounts)),
  });

  /** Selections per GSLB record name and type, every record counted ({@link countRecords}); only the top N are exported. */
  private readonly recordCounts = new Map<string, Map<string, CountCell>>();

  /** What the query path counts beyond rcodes and data centers ({@link setQueryCounters}). */
  private counters: QueryCounterSettings = DEFAULT_QUERY_COUNTERS;

  /**
   * The GSLB records answered most, as a top N: every record is counted in a plain number, and
   * only the {@link QueryCounterSettings.topRecords} largest counts are exported, so 20,000
   * records never become 20,000 series. A record that falls out of the top N stops being exported
   * (its series ends) and resumes with its whole count if it comes back.
   */
  readonly recordQueries = new Counter({
    name: 'gslbd_gslb_record_selections_total',
    help: 'GSLB selections by record name and type, for the records selected most since start (top N: queryCounters.topRecords)',
    labelNames: ['record', 'type'] as const,
    registers: [this.registry],
    collect: this.afterSources(exportTopRecords(this.recordCounts, () => this.counters.topRecords)),
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

  /** GSLB answers with their client while the console watches (its map); never exported to Prometheus. */
  readonly clientAnswers = new ClientAnswerSamples();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // prom-client names three gauges `*_total`, which Prometheus reserves for counters
    // (`promtool check metrics` fails on them); the same values are the sums of
    // `nodejs_active_handles{type}`, `nodejs_active_requests{type}` and `nodejs_active_resources{type}`.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
    // The Prometheus convention for build metadata: a constant 1 whose labels carry it.
    new Gauge({
      name: 'gslbd_build_info',
      help: 'Always 1; the labels carry the gslbd version and the Node.js version running it',
      labelNames: ['version', 'nodejs'] as const,
      registers: [this.registry],
    }).set({ version: GSLBD_VERSION, nodejs: process.version }, 1);
  }

  /**
   * Runs `source` before `gslbd_dns_queries_total`, `gslbd_dns_queries_by_qtype_total`,
   * `gslbd_dns_queries_by_zone_total`, `gslbd_gslb_record_selections_total` and
   * `gslbd_dc_answers_total` are read (a scrape, or a `get()`): for answers counted outside the
   * query path (the native fast path's replayed answers) to be added with {@link countReplayed}
   * first. It may run several times per scrape, so it adds only what is new since its last run.
   * Returns the function that removes it.
   */
  beforeScrape(source: () => void): () => void {
    this.scrapeSources.add(source);
    return () => this.scrapeSources.delete(source);
  }

  /** `collect` running the {@link beforeScrape} sources, then `collect`. */
  private afterSources<C>(collect: (this: C) => void): (this: C) => void {
    const sources = this.scrapeSources;
    return function collectAfterSources(this: C) {
      for (const source of sources) source();
      collect.call(this);
    };
  }

  /**
   * Counts `n` answers of one kind at once, in every counter the query path counts an engine
   * answer in (what {@link countQuery}, {@link countQtype}, {@link countZone}, {@link countRecords}
   * and {@link countDc} add for one query, times `n`): the native fast path's replayed answers,
   * folded in at scrape time so a query counts once whichever path answered it.
   */
  countReplayed(n: number, transport: string, type: number, answer: ReplayedAnswer): void {
    let byRcode = this.queryCells.get(transport);
    if (!byRcode) {
      byRcode = [];
      this.queryCells.set(transport, byRcode);
    }
    const rcode = answer.rcode;
    (byRcode[rcode] ??= this.queryCounts.cell({ transport, rcode: RCODE_NAMES[rcode] ?? String(rcode) })).n += n;
    this.qtypeCounts[type & 0xffff]! += n;
    for (const dc of answer.dcs) {
      let cell = this.dcCells.get(dc);
      if (!cell) {
        cell = this.dcCounts.cell({ dc });
        this.dcCells.set(dc, cell);
      }
      cell.n += n;
    }
    if (answer.zone !== undefined && this.counters.zones) {
      let cell = this.zoneCells.get(answer.zone);
      if (!cell) {
        cell = this.zoneCounts.cell({ zone: answer.zone === '' ? '.' : answer.zone });
        this.zoneCells.set(answer.zone, cell);
      }
      cell.n += n;
    }
    if (answer.selected !== undefined) {
      this.countRecord(answer.selected, n);
      if (answer.moreSelected !== undefined) for (const record of answer.moreSelected) this.countRecord(record, n);
    }
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

  /** Counts one question of type `type` (0–65535) in `gslbd_dns_queries_by_qtype_total`: one array increment. */
  countQtype(type: number): void {
    this.qtypeCounts[type & 0xffff]!++;
  }

  /** Applies the `queryCounters` settings (at start and on every reload). */
  setQueryCounters(settings: QueryCounterSettings): void {
    this.counters = settings;
  }

  /** Counts one question answered from zone `name` in `gslbd_dns_queries_by_zone_total` (when `queryCounters.zones` is on). */
  countZone(name: string): void {
    if (!this.counters.zones) return;
    let cell = this.zoneCells.get(name);
    if (!cell) {
      cell = this.zoneCounts.cell({ zone: name === '' ? '.' : name });
      this.zoneCells.set(name, cell);
    }
    cell.n++;
  }

  /** Counts one selection of each record in `records` for `gslbd_gslb_record_selections_total` (when `queryCounters.topRecords` > 0). */
  countRecords(records: readonly SelectedRecord[]): void {
    for (let i = 0; i < records.length; i++) this.countRecord(records[i]!);
  }

  /** Counts `n` selections (default one) of `record` for `gslbd_gslb_record_selections_total` (when `queryCounters.topRecords` > 0). */
  countRecord(record: SelectedRecord, n = 1): void {
    if (this.counters.topRecords === 0) return;
    let byType = this.recordCounts.get(record.name);
    if (!byType) {
      byType = new Map();
      this.recordCounts.set(record.name, byType);
    }
    const cell = byType.get(record.type);
    if (cell) cell.n += n;
    else byType.set(record.type, { n });
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

/** What {@link EngineMetrics.countReplayed} counts of an answer: the fields of `Answer` the query counters read. */
export type ReplayedAnswer = Pick<Answer, 'rcode' | 'dcs' | 'zone' | 'selected' | 'moreSelected'>;

/** The `queryCounters` configuration section: the counters beyond rcodes, query types and data centers. */
export interface QueryCounterSettings {
  /** Count questions per zone (`gslbd_dns_queries_by_zone_total`). */
  readonly zones: boolean;
  /** How many GSLB records `gslbd_gslb_record_selections_total` exports (the most selected); 0 counts none. */
  readonly topRecords: number;
}

/** The counters when the configuration says nothing: per zone on, the 20 most selected records. */
export const DEFAULT_QUERY_COUNTERS: QueryCounterSettings = { zones: true, topRecords: 20 };

/** Label of each named query type (`TYPE_CODES` without OPT, which is never a question type). */
const QTYPE_LABELS = new Map<number, string>(
  Object.entries(TYPE_CODES)
    .filter(([name]) => name !== 'OPT')
    .map(([name, code]) => [code, name]),
);

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

/** A counter's `collect` that adds the per-type counts since the last scrape (`added` keeps what was added). */
function addQtypeCounts(counts: Float64Array, added: Float64Array): (this: Counter<'qtype'>) => void {
  return function addQtypes(this: Counter<'qtype'>) {
    let other = 0;
    for (let code = 0; code < counts.length; code++) {
      const delta = counts[code]! - added[code]!;
      if (delta === 0) continue;
      added[code] = counts[code]!;
      const name = QTYPE_LABELS.get(code);
      if (name) this.inc({ qtype: name }, delta);
      else other += delta;
    }
    if (other > 0) this.inc({ qtype: 'other' }, other);
  };
}

/**
 * A counter's `collect` that exports the `top()` largest record counts: the counter is reset and
 * set to each exported record's whole count, so a series holds its record's total since start.
 * The selection sorts every counted record (20,000 records: a few milliseconds per scrape).
 */
function exportTopRecords(counts: Map<string, Map<string, CountCell>>, top: () => number): (this: Counter<'record' | 'type'>) => void {
  return function addTopRecords(this: Counter<'record' | 'type'>) {
    this.reset();
    const n = top();
    if (n === 0) return;
    const all: { record: string; type: string; n: number }[] = [];
    for (const [record, byType] of counts) for (const [type, cell] of byType) all.push({ record, type, n: cell.n });
    // Ties by name, so the exported set does not flap between scrapes.
    all.sort((a, b) => b.n - a.n || (a.record < b.record ? -1 : a.record > b.record ? 1 : a.type < b.type ? -1 : 1));
    for (let i = 0; i < all.length && i < n; i++) this.inc({ record: all[i]!.record, type: all[i]!.type }, all[i]!.n);
  };
}
