import type { MetricsConfig } from './metricsSchema.js';
import type { ClientNetworkPrefix, MetricReading, MetricSample, MetricSource, MetricView } from '../../core/views/metricView.js';
import { METRIC_CATALOG, metricId, statusId } from './catalog.js';
import { ClientNetworkRows } from './clientNetworkRows.js';
import { smoothMos } from './mos.js';

/** Samples of one host or service data center, by metric id, and one more slot for the monitor's status. */
type Row = (MetricSample | undefined)[];
/** subject → data center → row (host and service sources). */
type Table = Map<string | number, Map<string, Row>>;

/** One write: a subject's data center and the new values by metric id (undefined = not in this sample). */
export interface MetricWrite {
  readonly subject: string | number;
  readonly dc: string;
  readonly values: readonly (number | undefined)[];
}

/** Counts for /status and Prometheus. */
export interface MetricStoreStats {
  readonly hostDcs: number;
  readonly serviceRows: number;
  readonly clientNetworks: number;
  readonly clientEvictions: number;
}

/** A host or service row whose pushed samples stopped arriving: the newest is older than the source's staleness. */
export interface StaleMetricRow {
  readonly source: 'host' | 'service';
  /** The service (service metrics); absent for host metrics. */
  readonly service?: string;
  readonly dc: string;
  /** When the newest pushed sample arrived (ms since the epoch). */
  readonly lastPushMs: number;
  /** When the row became stale: `lastPushMs` plus the source's `staleAfterSeconds`. */
  readonly staleSinceMs: number;
}

const MOS_ID = metricId('client', 'mos');
/** The client rows' column after the catalog's: who wrote (network, DC) last, and when. */
const ORIGIN_COLUMN = METRIC_CATALOG.client.length;

/**
 * The metric store (docs/PRODUCT.md §3): the latest sample of every host, service and client metric, with
 * the time it arrived, so staleness is decided when a query reads it. It is both the writer side
 * (ingestion, monitors) and the {@link MetricView} the snapshot carries.
 *
 * Consistency without copying: a batch is validated first and then applied in one synchronous
 * call, and `resolve()` is synchronous too, so on Node's single thread a query sees a batch
 * entirely or not at all — the same guarantee as publishing a new immutable view, without
 * copying up to `maxNetworks` client rows per push. Host and service samples are immutable: a
 * write replaces the sample object in its slot; client samples live in flat arrays
 * ({@link ClientNetworkRows}). Reads never write (no LRU touch on the query path), so client
 * networks are evicted least-recently-*updated* first.
 */
export class MetricStore implements MetricView {
  private readonly host = new SourceTable(statusId('host'));
  private readonly service = new SourceTable(statusId('service'));
  /** The client metrics' columns, and one more: the reporter of the last write to (network, DC), as an id into {@link origins}. */
  private readonly client = new ClientNetworkRows(METRIC_CATALOG.client.length + 1, 0);
  /** Reporter names by id (id 0: none given); bounded by the agents the configuration names. */
  private readonly origins: (string | undefined)[] = [undefined];
  private readonly originIds = new Map<string, number>();
  private clientStaleMs = 0;
  private maxNetworks = 0;
  private mosWeight = 1;
  /** Known data centers by name → position in the configuration (the client rows' columns). */
  private dcs: ReadonlyMap<string, number> = new Map();
  private services: ReadonlySet<string> = new Set();
  private evictions = 0;
  clientNetworkPrefix: ClientNetworkPrefix = { ipv4: 24, ipv6: 48 };
  /**
   * The last subject and row read: a query reads one subject for every data center, and the
   * gate and the rank read one data center several times, so each is looked up once.
   */
  private cachedTable: SourceTable | undefined;
  private cachedSubject: string | number = '';
  private cachedRows: Map<string, Row> | undefined;
  private cachedDc = '';
  private cachedRow: Row | undefined;
  /** The last client network read and its slot (−1: none held). */
  private cachedClientKey: string | number | undefined;
  private cachedClientSlot = -1;

  constructor(config: MetricsConfig, dataCenters: Iterable<string>, services: Iterable<string>) {
    this.configure(config, dataCenters, services);
  }

  /**
   * Applies a (re)loaded configuration: staleness per source, client network lengths, LRU bound,
   * known data centers and services. Rows of data centers or services that no longer exist are
   * dropped; a change of the client network lengths drops every client row (their keys no
   * longer mean the same networks).
   */
  configure(config: MetricsConfig, dataCenters: Iterable<string>, services: Iterable<string>): void {
    this.forgetCached();
    this.host.staleMs = config.host.staleAfterSeconds * 1000;
    this.service.staleMs = config.service.staleAfterSeconds * 1000;
    this.clientStaleMs = config.client.staleAfterSeconds * 1000;
    this.maxNetworks = config.client.maxNetworks;
    this.mosWeight = config.client.mosSmoothing;
    const prefix = { ipv4: config.client.ipv4Prefix, ipv6: config.client.ipv6Prefix };
    if (prefix.ipv4 !== this.clientNetworkPrefix.ipv4 || prefix.ipv6 !== this.clientNetworkPrefix.ipv6) this.client.clear();
    this.clientNetworkPrefix = prefix;
    const names = [...new Set(dataCenters)];
    const old = this.dcs;
    this.dcs = new Map(names.map((name, i) => [name, i]));
    if (names.length !== old.size || names.some((name, i) => old.get(name) !== i)) this.client.reshape(names.map((name) => old.get(name) ?? -1));
    this.services = new Set(services);
    for (const source of ['host', 'service'] as const) {
      const table = this.table(source).rows;
      for (const [subject, rows] of table) {
        if (source === 'service' && !this.services.has(subject as string)) {
          table.delete(subject);
          continue;
        }
        for (const dc of rows.keys()) if (!this.dcs.has(dc)) rows.delete(dc);
        if (rows.size === 0) table.delete(subject);
      }
    }
    this.evictClients();
  }

  hasDataCenter(name: string): boolean {
    return this.dcs.has(name);
  }

  hasService(name: string): boolean {
    return this.services.has(name);
  }

  /** Staleness limit of a source in ms. */
  staleAfterMs(source: MetricSource): number {
    return source === 'client' ? this.clientStaleMs : this.table(source).staleMs;
  }

  read(source: MetricSource, subject: string | number, dc: string, metric: number, nowMs: number): number {
    if (source === 'client') {
      const i = this.clientOffset(subject, dc);
      if (i < 0) return NaN;
      const values = this.client.column(metric);
      // `!(age <= limit)` is also true for a missing sample (atMs NaN).
      if (!(nowMs - values[i + 1]! <= this.clientStaleMs)) return NaN;
      return values[i]!;
    }
    const table = this.table(source);
    const row = this.rowOf(table, subject, dc);
    if (row === undefined) return NaN;
    if (metric === table.statusId) return status(row, metric, table.staleMs, nowMs);
    const s = row[metric];
    if (s === undefined || nowMs - s.atMs > table.staleMs) return NaN;
    return s.value;
  }

  describe(source: MetricSource, subject: string | number, dc: string, metric: number, nowMs: number): MetricReading {
    if (source === 'client') {
      const i = this.clientOffset(subject, dc);
      const atMs = i < 0 ? NaN : this.client.column(metric)[i + 1]!;
      const value = this.read(source, subject, dc, metric, nowMs);
      if (Number.isNaN(atMs)) return { state: 'missing' };
      // The reporter of the last write to (network, DC), when that write carried this metric.
      const origins = this.client.column(ORIGIN_COLUMN);
      const by = origins[i + 1] === atMs ? this.origins[origins[i]!] : undefined;
      return {
        ...(Number.isNaN(value) ? {} : { value }),
        ageMs: nowMs - atMs,
        state: nowMs - atMs > this.clientStaleMs ? 'stale' : 'fresh',
        ...(by === undefined ? {} : { reportedBy: by }),
      };
    }
    const table = this.table(source);
    const row = table.rows.get(subject)?.get(dc);
    const pushed = row?.[metric];
    const monitorSample = metric === table.statusId ? row?.[METRIC_CATALOG[source].length] : undefined;
    const value = this.read(source, subject, dc, metric, nowMs);
    const state = pushed === undefined ? 'missing' : nowMs - pushed.atMs > table.staleMs ? 'stale' : 'fresh';
    return {
      ...(Number.isNaN(value) ? {} : { value }),
      ...(pushed ? { ageMs: nowMs - pushed.atMs } : {}),
      state,
      ...(monitorSample ? { monitor: monitorSample.value === 1 ? ('up' as const) : ('down' as const) } : {}),
      ...(pushed?.origin === undefined ? {} : { reportedBy: pushed.origin }),
    };
  }

  /**
   * Applies validated writes of one source at `nowMs` (callers validate first: unknown data
   * centers or services, NaN, negatives and out-of-range values never reach the store). A client
   * MOS is smoothed with the previous fresh score of the same network and data center.
   * `origin` names the reporter (an agent; absent for the admin token), shown by {@link describe}.
   */
  apply(source: MetricSource, writes: readonly MetricWrite[], nowMs: number, origin?: string): void {
    this.forgetCached();
    if (source === 'client') {
      this.applyClient(writes, nowMs, this.originId(origin));
      return;
    }
    const table = this.table(source).rows;
    const width = METRIC_CATALOG[source].length + 1;
    for (const w of writes) {
      let rows = table.get(w.subject);
      if (rows === undefined) table.set(w.subject, (rows = new Map()));
      let row = rows.get(w.dc);
      if (row === undefined) rows.set(w.dc, (row = new Array<MetricSample | undefined>(width).fill(undefined)));
      for (let id = 0; id < w.values.length; id++) {
        const value = w.values[id];
        if (value !== undefined) row[id] = origin === undefined ? { value, atMs: nowMs } : { value, atMs: nowMs, origin };
      }
    }
  }

  /**
   * What a health monitor says of a data center (`host`) or of a service in a data center
   * (`service`): true = up, false = down, undefined = no monitor covers it any more. The health
   * issue's monitors call this; the `status` metric then follows the agreement rule (both pushed
   * and monitor status must say up when both report). Monitor status never goes stale: monitors
   * own their own timing (rise/fall counts).
   */
  setMonitorStatus(source: 'host' | 'service', subject: string, dc: string, up: boolean | undefined, nowMs: number): void {
    this.forgetCached();
    const slot = METRIC_CATALOG[source].length;
    const table = this.table(source).rows;
    let rows = table.get(subject);
    if (rows === undefined) {
      if (up === undefined) return;
      table.set(subject, (rows = new Map()));
    }
    let row = rows.get(dc);
    if (row === undefined) {
      if (up === undefined) return;
      rows.set(dc, (row = new Array<MetricSample | undefined>(slot + 1).fill(undefined)));
    }
    row[slot] = up === undefined ? undefined : { value: up ? 1 : 0, atMs: nowMs };
  }

  /**
   * The host and service rows that were pushed to and whose newest pushed sample is now stale
   * (docs/PRODUCT.md §3: a stale metric reads as missing, so the gates and ranks that use it fall
   * back): a push pipeline that stopped. Monitor verdicts are not pushes and do not count; rows
   * never pushed to are not stale, only unused. Client networks are left out: networks stop
   * reporting as clients come and go. Cost: one pass over the rows (data centers × services).
   * @returns the stale rows, oldest push first.
   */
  staleRows(nowMs: number): StaleMetricRow[] {
    const out: StaleMetricRow[] = [];
    for (const [source, table] of [
      ['host', this.host],
      ['service', this.service],
    ] as const) {
      for (const [subject, rows] of table.rows) {
        for (const [dc, row] of rows) {
          let lastPushMs = -Infinity;
          // The last slot holds the monitor's verdict, not a push.
          for (let i = 0; i < row.length - 1; i++) if (row[i] !== undefined && row[i]!.atMs > lastPushMs) lastPushMs = row[i]!.atMs;
          if (lastPushMs === -Infinity || nowMs - lastPushMs <= table.staleMs) continue;
          out.push({ source, ...(source === 'service' ? { service: String(subject) } : {}), dc, lastPushMs, staleSinceMs: lastPushMs + table.staleMs });
        }
      }
    }
    return out.sort((a, b) => a.lastPushMs - b.lastPushMs);
  }

  stats(): MetricStoreStats {
    let serviceRows = 0;
    for (const rows of this.service.rows.values()) serviceRows += rows.size;
    return {
      hostDcs: this.host.rows.get('')?.size ?? 0,
      serviceRows,
      clientNetworks: this.client.size,
      clientEvictions: this.evictions,
    };
  }

  /** The id of a reporter's name in the client rows' origin column (0: none). */
  private originId(origin: string | undefined): number {
    if (origin === undefined) return 0;
    let id = this.originIds.get(origin);
    if (id === undefined) {
      id = this.origins.push(origin) - 1;
      this.originIds.set(origin, id);
    }
    return id;
  }

  private table(source: 'host' | 'service'): SourceTable {
    return source === 'host' ? this.host : this.service;
  }

  /** Client writes: each network becomes the most recently updated; a MOS is smoothed with the previous fresh score. */
  private applyClient(writes: readonly MetricWrite[], nowMs: number, origin: number): void {
    for (const w of writes) {
      const slot = this.client.touch(w.subject);
      const dc = this.dcs.get(w.dc)!;
      this.client.write(slot, ORIGIN_COLUMN, dc, origin, nowMs);
      for (let id = 0; id < w.values.length; id++) {
        let value = w.values[id];
        if (value === undefined) continue;
        if (id === MOS_ID) {
          const i = this.client.offset(slot, dc);
          const values = this.client.column(id);
          const fresh = nowMs - values[i + 1]! <= this.clientStaleMs ? values[i]! : undefined;
          value = smoothMos(fresh, value, this.mosWeight);
        }
        this.client.write(slot, id, dc, value, nowMs);
      }
    }
    this.evictClients();
  }

  /**
   * Where the client samples of (network, dc) sit in the client rows' metric columns, or −1 when
   * the network or the data center is unknown. A query reads one network for every data center,
   * so the network's slot is looked up once.
   */
  private clientOffset(subject: string | number, dc: string): number {
    if (subject !== this.cachedClientKey) {
      this.cachedClientKey = subject;
      this.cachedClientSlot = this.client.slotOf(subject);
    }
    const slot = this.cachedClientSlot;
    const d = this.dcs.get(dc);
    if (slot < 0 || d === undefined) return -1;
    return this.client.offset(slot, d);
  }

  private forgetCached(): void {
    this.cachedTable = undefined;
    this.cachedClientKey = undefined;
  }

  private rowOf(table: SourceTable, subject: string | number, dc: string): Row | undefined {
    if (table !== this.cachedTable || subject !== this.cachedSubject) {
      this.cachedTable = table;
      this.cachedSubject = subject;
      this.cachedRows = table.rows.get(subject);
      this.cachedDc = dc;
      return (this.cachedRow = this.cachedRows?.get(dc));
    }
    if (dc === this.cachedDc) return this.cachedRow;
    this.cachedDc = dc;
    return (this.cachedRow = this.cachedRows?.get(dc));
  }

  private evictClients(): void {
    this.evictions += this.client.evictTo(this.maxNetworks);
  }
}

/** One source's rows and read parameters. */
class SourceTable {
  readonly rows: Table = new Map();
  staleMs = 0;

  /** `statusId`: the id of `status` in the source (−1: none); the monitor's opinion sits after the catalog. */
  constructor(readonly statusId: number) {}
}

/** Pushed status (when fresh) and monitor status must both say up; NaN when neither reports. */
function status(row: Row, metric: number, staleMs: number, nowMs: number): number {
  const pushed = row[metric];
  const monitor = row[row.length - 1];
  const p = pushed !== undefined && nowMs - pushed.atMs <= staleMs ? pushed.value : -1;
  const m = monitor !== undefined ? monitor.value : -1;
  if (p < 0 && m < 0) return NaN;
  return p === 0 || m === 0 ? 0 : 1;
}
