import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../core/telemetry/logger.js';
import type { HealthView } from '../../core/views/healthView.js';
import type { CompiledGslbRecord } from '../../pipeline/selection/stage.js';
import { runInSlices, runSteps, type Steps } from '../../pipeline/selection/steps.js';
import { gateAvailability, recordHealthOf } from './healthGate.js';
import type { AllDownPolicy, CompiledRecordHealth } from './recordHealth.js';

/** A GSLB record answering by its all-down policy (every endpoint of every tier out). */
export interface FailsafeInUse {
  /** `name/type`, as the metrics label it. */
  readonly record: string;
  readonly allDown: AllDownPolicy;
  /** What answers instead: the fail-safe list, NODATA, or the first tier as if up (fail-open). */
  readonly answer: string;
  /** When the record entered it (ms since the epoch). */
  readonly sinceMs: number;
}

/**
 * Makes the all-down fallback visible (docs/PRODUCT.md §3 and §6: the fail-safe list keeps a name
 * answering, but an operator must learn it is in use): after every published snapshot it asks
 * the health gate of each record whether the record is all down on the snapshot's health view,
 * and logs entering (warn) and leaving (info) once per record, counts entries per record
 * (`gslbd_failsafe_entered_total{record}`) and exposes the records in it
 * (`gslbd_failsafe_active{record}`, and {@link inUse} for `/healthz`). Labels are `name/type`
 * of configured records only, so series are bounded by the records that ever went all down.
 *
 * It runs off the query path, once per publish, and shares the gate's memo (a query after a
 * check reuses the outcome). A cold-start wait that ends between two publishes is seen at the
 * next publish. The engine runs it in slices ({@link follow}): over 20,000 records one check held
 * the event loop 120-180 ms after each reload and each health publish (issue 17).
 */
export class FailsafeWatch {
  private readonly active = new Map<string, FailsafeInUse>();
  private readonly entered: Counter<'record'>;
  private readonly activeGauge: Gauge<'record'>;
  /** {@link inUse}'s list, until a record enters or leaves the fallback. */
  private listed: readonly FailsafeInUse[] | undefined;
  /** The check running in slices, if any ({@link follow}). */
  private running: Promise<void> | undefined;
  /** What to check next: set by every {@link follow}, read when a check starts. */
  private latest: (() => FailsafeCheck) | undefined;
  private again = false;

  constructor(
    private readonly log: Logger,
    registry: Registry,
  ) {
    this.entered = new Counter({
      name: 'gslbd_failsafe_entered_total',
      help: 'Times a GSLB record went all down and answered by its all-down policy (fail-safe list, fail-open, fail-closed), by record name/type',
      labelNames: ['record'] as const,
      registers: [registry],
    });
    // Set as records enter and leave, not by a collect walking every record in the fallback at
    // each scrape (20,000 records all down: one turn of 10-20 ms per scrape, issue 17).
    this.activeGauge = new Gauge({
      name: 'gslbd_failsafe_active',
      help: 'GSLB records answering by their all-down policy now (1), by record name/type',
      labelNames: ['record'] as const,
      registers: [registry],
    });
  }

  /**
   * Checks every record of a published snapshot on its health view at `nowMs`; logs and counts
   * the records that entered or left the all-down fallback since the last check (a record that
   * left the configuration leaves it too).
   */
  check(records: readonly CompiledGslbRecord[], view: HealthView, nowMs: number): void {
    runSteps(this.checkSteps(records, view, nowMs));
  }

  /**
   * {@link check} in slices of about `sliceMs` ms (`runInSlices`), one check at a time: a call while
   * a check runs makes one more check start after it, on what `latest` gives then (the snapshot
   * published last), so a burst of publishes costs at most two checks. The promise settles when no
   * check is running or due.
   */
  follow(latest: () => FailsafeCheck, sliceMs?: number): Promise<void> {
    this.latest = latest;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<void> => {
      try {
        do {
          this.again = false;
          const { records, view, nowMs } = this.latest!();
          await runInSlices(this.checkSteps(records, view, nowMs), sliceMs);
        } while (this.again);
      } finally {
        this.running = undefined;
      }
    };
    this.running = run();
    return this.running;
  }

  /** {@link check} as steps of {@link CHECK_STEP} records (`src/pipeline/selection/steps.ts`). */
  *checkSteps(records: readonly CompiledGslbRecord[], view: HealthView, nowMs: number): Steps<void> {
    const seen = new Set<string>();
    let n = 0;
    for (const r of records) {
      if (++n % CHECK_STEP === 0) yield;
      const health = healthOf(r);
      if (!health || !gateAvailability(health, view, nowMs).allDown) continue;
      const key = `${r.name}/${r.type}`;
      seen.add(key);
      if (this.active.has(key)) continue;
      const entry: FailsafeInUse = { record: key, allDown: health.allDown, answer: fallbackAnswer(r, health), sinceMs: nowMs };
      this.active.set(key, entry);
      this.listed = undefined;
      this.activeGauge.set({ record: key }, 1);
      this.entered.inc({ record: key });
      this.log.warn({ record: key, allDown: entry.allDown, answer: entry.answer }, 'fail-safe entered: every endpoint of the record is out');
    }
    for (const [key, entry] of this.active) {
      if (seen.has(key)) continue;
      this.active.delete(key);
      this.listed = undefined;
      this.activeGauge.remove({ record: key });
      this.log.info({ record: key, allDown: entry.allDown, durationMs: nowMs - entry.sinceMs }, 'fail-safe left: endpoints answer again');
    }
  }

  /**
   * The records in the all-down fallback now, in the order they entered it: the same array until
   * one enters or leaves (`/healthz` describes a list of 20,000 once, not at every request).
   */
  inUse(): readonly FailsafeInUse[] {
    return (this.listed ??= [...this.active.values()]);
  }
}

/** Records checked between two yields of {@link FailsafeWatch.checkSteps}: about 0.1-0.5 ms on a quiet machine. */
export const CHECK_STEP = 64;

/** What {@link FailsafeWatch.follow} checks: the records and health view of a published snapshot, at `nowMs`. */
export interface FailsafeCheck {
  readonly records: readonly CompiledGslbRecord[];
  readonly view: HealthView;
  readonly nowMs: number;
}

/** The health the record's gate stage was built over; undefined for a record without a health gate. */
function healthOf(r: CompiledGslbRecord): CompiledRecordHealth | undefined {
  for (const stage of r.pipeline) {
    const h = recordHealthOf(stage);
    if (h) return h;
  }
  return undefined;
}

/** What answers a record while it is all down, as `failsafeStage` and the gate decide it. */
function fallbackAnswer(r: CompiledGslbRecord, h: CompiledRecordHealth): string {
  switch (h.allDown) {
    case 'fail-closed':
      return 'NODATA';
    case 'fail-open':
      return h.tiers.length > 0 ? `${h.tiers[0]!.label} as if up` : r.failsafe.length > 0 ? 'fail-safe list' : 'NODATA';
    case 'failsafe':
      return r.failsafe.length > 0 ? 'fail-safe list' : 'NODATA';
  }
}
