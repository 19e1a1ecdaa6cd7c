import { unpackId } from '../core/lpm/rangeTable.js';
import type { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import type { Engine } from '../pipeline/engine.js';
import type { CompiledGslbRecord } from '../pipeline/selection/stage.js';
import { runInSlices, type Steps } from '../pipeline/selection/steps.js';
import type { EngineCondition } from './engineCondition.js';

/** One endpoint as the console shows it. */
export interface ConsoleEndpoint {
  readonly key: string;
  readonly status: string;
  readonly override: string | null;
  /** When the status was entered (ISO 8601), null when never (an unmonitored endpoint). */
  readonly since: string | null;
}

/** Answers located in one country over the map's window, per data center answered. */
export interface ConsoleCountry {
  /** The country qualifier of the location data (ISO 3166-1 alpha-2 with the bundled data), `unknown` when not located. */
  readonly country: string;
  /** The mean coordinates (degrees) of the located answers that had coordinates; absent when none had. */
  readonly lat?: number;
  readonly lon?: number;
  /** Answers per data center name. */
  readonly dcs: Readonly<Record<string, number>>;
}

/** What the console shows, sent on every update. */
export interface ConsoleState {
  readonly at: string;
  readonly generation: number;
  readonly status: EngineCondition['status'];
  readonly reasons: EngineCondition['reasons'];
  readonly lastReload: unknown;
  /** Recent reloads, newest first (generation, time, result, reason). */
  readonly reloads: readonly unknown[];
  readonly dataCenters: readonly {
    readonly name: string;
    readonly status: string;
    /** Configured coordinates (degrees), for the map; absent when not configured. */
    readonly lat?: number;
    readonly lon?: number;
    readonly endpoints: readonly ConsoleEndpoint[];
    /**
     * GSLB answers naming this DC since start, over the last minute, and per minute over the last
     * {@link WINDOW_MINUTES} (newest first; the console's own samples of `gslbd_dc_answers_total`,
     * taken only while a console is subscribed: minutes before the first subscriber are absent).
     */
    readonly answers: { readonly total: number; readonly lastMinute: number; readonly perMinute: readonly number[] };
  }[];
  /**
   * Answers per (country, data center) over the last {@link WINDOW_MINUTES} while a console was
   * subscribed (`dropped`: answers beyond the sampling bound, not located).
   */
  readonly map: { readonly windowMinutes: number; readonly countries: readonly ConsoleCountry[]; readonly dropped: number };
  /** The state store and the nodes sharing it (as `/status` `store`); null on one node without a shared store. */
  readonly store: unknown;
}

/** How often subscribed consoles get the state (ms); nothing is computed while none is subscribed. */
export const CONSOLE_UPDATE_MS = 2000;
/** The window of the per-DC answer shares and of the map (minutes). */
export const WINDOW_MINUTES = 15;
const MINUTE_MS = 60000;

/** One minute of located answers: per country, coordinate sums and counts per data center. */
interface MinuteBucket {
  readonly minute: number;
  readonly countries: Map<string, { lat: number; lon: number; located: number; dcs: Map<string, number> }>;
  dropped: number;
}

/**
 * The console's live state, built from the engine's snapshot (data centers, endpoints and their
 * health with since when), its condition (fail-safe, reload history), its counters and the
 * located client answers (`ClientAnswerSamples`, active only while someone is subscribed), and
 * pushed to subscribers every {@link CONSOLE_UPDATE_MS} by one shared timer: the cost is one state
 * per period whatever the number of subscribers (bounded by the admin listener's
 * `maxEventStreams`), and the map's memory is bounded by countries × data centers × 15 minutes.
 */
export class ConsoleFeed {
  private readonly subscribers = new Set<(state: ConsoleState) => void>();
  private timer: NodeJS.Timeout | undefined;
  /** Samples of the per-DC answer counters, oldest first, over the last {@link WINDOW_MINUTES}. */
  private samples: { atMs: number; counts: Map<string, number> }[] = [];
  private minutes: MinuteBucket[] = [];

  constructor(
    private readonly engine: Engine,
    private readonly metrics: EngineMetrics,
    private readonly condition: () => EngineCondition,
    private readonly store?: () => object,
  ) {}

  /** Adds a subscriber: it gets the state now and on every update until the returned function is called. */
  subscribe(send: (state: ConsoleState) => void): () => void {
    this.subscribers.add(send);
    this.metrics.clientAnswers.active = true;
    void this.state().then(send);
    this.timer ??= setInterval(() => void this.tick(), CONSOLE_UPDATE_MS);
    return () => {
      this.subscribers.delete(send);
      if (this.subscribers.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
        this.metrics.clientAnswers.active = false;
        this.metrics.clientAnswers.drain();
        this.samples = [];
        this.minutes = [];
      }
    };
  }

  private async tick(): Promise<void> {
    const s = await this.state();
    for (const send of this.subscribers) send(s);
  }

  /** The state now (samples the answer counters, locates the client answers kept since the last state). */
  async state(): Promise<ConsoleState> {
    const nowMs = Date.now();
    const counts = new Map<string, number>();
    for (const v of (await this.metrics.dcAnswers.get()).values) counts.set(String(v.labels.dc), v.value);
    this.samples.push({ atMs: nowMs, counts });
    while (this.samples.length > 1 && this.samples[0]!.atMs < nowMs - WINDOW_MINUTES * MINUTE_MS - CONSOLE_UPDATE_MS) this.samples.shift();
    this.locate(nowMs);
    const snap = this.engine.snapshot;
    const health = snap.env.health;
    const byDc = await endpointsByDc(snap.records);
    const c = this.condition();
    return {
      at: new Date(nowMs).toISOString(),
      generation: snap.generation,
      status: c.status,
      reasons: c.reasons,
      lastReload: c.lastReload ?? null,
      reloads: c.reloads ?? [],
      dataCenters: snap.dataCenters.map((dc) => {
        const count = (atMs: number): number | undefined => this.countAt(dc.name, atMs);
        const total = counts.get(dc.name) ?? 0;
        const perMinute: number[] = [];
        for (let m = 0; m < WINDOW_MINUTES; m++) {
          const older = count(nowMs - (m + 1) * MINUTE_MS);
          if (older === undefined) break;
          perMinute.push((count(nowMs - m * MINUTE_MS) ?? total) - older);
        }
        return {
          name: dc.name,
          status: health.hostStatus(dc.name),
          ...(dc.lat !== undefined && dc.lon !== undefined ? { lat: dc.lat, lon: dc.lon } : {}),
          endpoints: (byDc.get(dc.name) ?? []).map((key) => {
            const h = health.endpointHealth(key);
            return { key, status: h.status, override: h.override ?? null, since: h.sinceMs > 0 ? new Date(h.sinceMs).toISOString() : null };
          }),
          answers: { total, lastMinute: total - (count(nowMs - MINUTE_MS) ?? this.samples[0]!.counts.get(dc.name) ?? 0), perMinute },
        };
      }),
      map: this.mapCounts(),
      store: this.store?.() ?? null,
    };
  }

  /** The counter of `dc` at the newest sample taken at or before `atMs`; undefined when no sample is that old. */
  private countAt(dc: string, atMs: number): number | undefined {
    let found: Map<string, number> | undefined;
    for (const s of this.samples) {
      if (s.atMs > atMs) break;
      found = s.counts;
    }
    return found === undefined ? undefined : (found.get(dc) ?? 0);
  }

  /** Locates the answers kept since the last state into this minute's bucket; drops buckets older than the window. */
  private locate(nowMs: number): void {
    const minute = Math.floor(nowMs / MINUTE_MS);
    let bucket = this.minutes.at(-1);
    if (bucket?.minute !== minute) {
      bucket = { minute, countries: new Map(), dropped: 0 };
      this.minutes.push(bucket);
    }
    this.minutes = this.minutes.filter((b) => b.minute > minute - WINDOW_MINUTES);
    const { answers, dropped } = this.metrics.clientAnswers.drain();
    bucket.dropped += dropped;
    const geo = this.engine.snapshot.env.geo;
    for (const a of answers) {
      const id = unpackId(geo.lookup(a.address));
      const loc = id === 0 ? undefined : geo.location(id);
      const country = loc?.qualifiers[1] || 'unknown';
      let row = bucket.countries.get(country);
      if (!row) {
        row = { lat: 0, lon: 0, located: 0, dcs: new Map() };
        bucket.countries.set(country, row);
      }
      if (loc?.lat !== undefined && loc.lon !== undefined) {
        row.lat += loc.lat;
        row.lon += loc.lon;
        row.located++;
      }
      for (const dc of a.dcs) row.dcs.set(dc, (row.dcs.get(dc) ?? 0) + 1);
    }
  }

  private mapCounts(): ConsoleState['map'] {
    const all = new Map<string, { lat: number; lon: number; located: number; dcs: Map<string, number> }>();
    let dropped = 0;
    for (const b of this.minutes) {
      dropped += b.dropped;
      for (const [country, row] of b.countries) {
        let sum = all.get(country);
        if (!sum) {
          sum = { lat: 0, lon: 0, located: 0, dcs: new Map() };
          all.set(country, sum);
        }
        sum.lat += row.lat;
        sum.lon += row.lon;
        sum.located += row.located;
        for (const [dc, n] of row.dcs) sum.dcs.set(dc, (sum.dcs.get(dc) ?? 0) + n);
      }
    }
    const countries = [...all]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([country, s]) => ({
        country,
        ...(s.located > 0 ? { lat: s.lat / s.located, lon: s.lon / s.located } : {}),
        dcs: Object.fromEntries([...s.dcs].sort(([a], [b]) => a.localeCompare(b))),
      }));
    return { windowMinutes: WINDOW_MINUTES, countries, dropped };
  }
}

/** Records read between two yields of {@link endpointsByDcSteps}. */
const RECORDS_PER_STEP = 256;

/** The endpoint lists of each record list (a snapshot's `records`), built once per list and dropped with it. */
const endpointLists = new WeakMap<readonly CompiledGslbRecord[], Promise<ReadonlyMap<string, readonly string[]>>>();

/**
 * The keys of the endpoints the records name, per data center, sorted: built in slices
 * (`runInSlices`; 20,000 records took 25–50 ms in one go, issue 17) once per record list, which
 * stays the same while only health or metric views are published.
 */
function endpointsByDc(records: readonly CompiledGslbRecord[]): Promise<ReadonlyMap<string, readonly string[]>> {
  let lists = endpointLists.get(records);
  if (!lists) {
    lists = runInSlices(endpointsByDcSteps(records));
    endpointLists.set(records, lists);
  }
  return lists;
}

/** {@link endpointsByDc} as steps of {@link RECORDS_PER_STEP} records, then one per data center sorted. */
export function* endpointsByDcSteps(records: readonly CompiledGslbRecord[]): Steps<ReadonlyMap<string, readonly string[]>> {
  const byDc = new Map<string, Set<string>>();
  let read = 0;
  for (const r of records) {
    for (const c of r.candidates) {
      let keys = byDc.get(c.dc.name);
      if (!keys) byDc.set(c.dc.name, (keys = new Set()));
      for (const e of c.endpoints) keys.add(e.key);
    }
    if (++read % RECORDS_PER_STEP === 0) yield;
  }
  const sorted = new Map<string, readonly string[]>();
  for (const [dc, keys] of byDc) {
    sorted.set(dc, [...keys].sort());
    yield;
  }
  return sorted;
}
