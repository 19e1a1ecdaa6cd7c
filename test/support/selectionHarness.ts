import { parseConfigText } from '../../src/process/loadConfig.js';
import type { Config } from '../../src/process/configSchema.js';
import { TYPE_CODES, type RecordType } from '../../src/core/dns/records.js';
import { type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { familyBits, parseCidr, parseIp } from '../../src/core/net/ipAddress.js';
import { qualifiersFromData } from '../../src/core/location/location.js';
import { emptyLocationDb, type LocationDb } from '../../src/core/location/locationDb.js';
import { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { LocationTable } from '../../src/capabilities/geo/locationTable.js';
import { RangeBuilder4, RangeBuilder6 } from '../../src/core/lpm/rangeTable.js';
import { MetricStore } from '../../src/capabilities/steering/metricStore.js';
import { ingestBatch } from '../../src/capabilities/steering/ingest.js';
import { allUpHealthView, endpointsDownView, type HealthView } from '../../src/core/views/healthView.js';
import type { MetricSource } from '../../src/core/views/metricView.js';
import type { ResolveContext } from '../../src/core/views/resolveContext.js';
import { RotationStore } from '../../src/core/views/rotationStore.js';
import { resolve, type ExplainedSelection } from '../../src/pipeline/zones/authoritative.js';
import { type Answer } from '../../src/core/model/query.js';
import { seededRandom } from './seededRandom.js';

/**
 * Pearson's chi-square statistic of observed counts against expected proportions. Bounds used in
 * tests are the 0.999 quantiles: df 1 → 10.83, df 2 → 13.82, df 3 → 16.27.
 */
export function chiSquare(observed: readonly number[], proportions: readonly number[]): number {
  const n = observed.reduce((a, b) => a + b, 0);
  let x2 = 0;
  observed.forEach((o, i) => {
    const e = n * proportions[i]!;
    x2 += ((o - e) * (o - e)) / e;
  });
  return x2;
}

/** A location database over IPv4 ranges written as `[cidr, "EU.NL", lat, lon]`. */
export function tinyLocationDb(entries: readonly [string, string, number, number][]): LocationDb {
  const table = new LocationTable();
  const v4 = new RangeBuilder4();
  const sorted = entries.map((e) => ({ p: parseCidr(e[0]), e })).sort((a, b) => a.p.address.w0 - b.p.address.w0);
  for (const { p, e } of sorted) {
    const size = 2 ** (32 - p.prefix);
    const id = table.intern({ qualifiers: qualifiersFromData(e[1].split('.')), lat: e[2], lon: e[3] });
    v4.add(p.address.w0, p.address.w0 + size - 1, id);
  }
  return new RangeLocationDb(table, v4.build(), new RangeBuilder6().build(), ['test']);
}

/** Health view where the listed endpoint keys (`service/dc/address`) are down. */
export function downHealth(down: Iterable<string>): HealthView {
  const set = new Set(down);
  return endpointsDownView(set, `down: ${[...set].join(', ')}`);
}

export interface HarnessOptions {
  readonly health?: HealthView;
  readonly geo?: LocationDb;
  /** Seed of the random source (`seededRandom`, the generator the benchmark client mix uses too). */
  readonly seed?: number;
  /** Start of the fake clock (ms since the epoch). */
  readonly nowMs?: number;
}

/**
 * An engine core without listeners: a configuration (YAML text), a metric store, an injected
 * health view, a fake clock and a seeded random source; `query` answers like the DNS front door.
 */
export class SelectionHarness {
  readonly config: Config;
  readonly store: MetricStore;
  readonly ctx: ResolveContext;
  snapshot: Snapshot;
  nowMs: number;

  constructor(yaml: string, o: HarnessOptions = {}) {
    this.config = parseConfigText(yaml, 'test.yaml');
    this.store = new MetricStore(
      this.config.metrics,
      this.config.datacenters.map((d) => d.name),
      this.config.services.map((s) => s.name),
    );
    this.nowMs = o.nowMs ?? 1_700_000_000_000;
    this.ctx = { random: seededRandom(o.seed ?? 1), now: () => this.nowMs, rotation: new RotationStore() };
    this.snapshot = buildSnapshot(
      'test.yaml',
      this.config,
      { geo: o.geo ?? emptyLocationDb(), health: o.health ?? allUpHealthView, metrics: this.store },
      this.nowMs,
    );
  }

  /** Replaces the health view (a new snapshot, as the health issue's monitors would publish). */
  setHealth(health: HealthView): void {
    this.snapshot = { ...this.snapshot, env: { ...this.snapshot.env, health } };
  }

  /**
   * Pushes a batch as the admin route would, at the current fake time.
   * @throws Error with the problems when the store rejects it.
   */
  push(source: MetricSource, samples: readonly Record<string, unknown>[]): void {
    const r = ingestBatch(this.store, source, { samples }, this.nowMs);
    if (!r.ok) throw new Error(`push rejected (${r.status}): ${JSON.stringify(r.problems)}`);
  }

  /** Answers `name`/`type` for `client` (an address, or `addr/len` for an ECS source prefix). */
  query(name: string, type: RecordType, client: string, explain?: ExplainedSelection[]): Answer {
    const p = client.includes('/') ? parseCidr(client) : { address: parseIp(client), prefix: -1 };
    const bits = familyBits(p.address.family);
    const prefix = p.prefix < 0 ? bits : p.prefix;
    return resolve(
      { name, type: TYPE_CODES[type], client: { address: p.address, sourcePrefix: prefix, fromEcs: prefix < bits }, transport: 'udp' },
      this.snapshot,
      this.ctx,
      explain,
    );
  }

  /** The answer's record data as presentation strings, in answer order. */
  answer(name: string, type: RecordType, client: string): string[] {
    return this.query(name, type, client).answers.map((r) => (typeof r.data === 'string' ? r.data : JSON.stringify(r.data)));
  }

  /** The trace steps of the first selection for the query. */
  trace(name: string, type: RecordType, client: string): ExplainedSelection['steps'] {
    const out: ExplainedSelection[] = [];
    this.query(name, type, client, out);
    return out[0]!.steps;
  }
}
