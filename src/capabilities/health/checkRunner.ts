import type { StateMap } from '../../core/contracts/stateStore.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { CheckOutcome, CheckRun, CheckStart } from './checks/check.js';
import type { CheckFiles } from './checks/checkKind.js';
import { checkFor, type CheckKindList } from './checks/registry.js';
import { applyResult, unknownCheckState, type CheckState } from './checkState.js';
import type { HealthMetrics } from './healthMetrics.js';
import type { HealthPlan, PlannedCheck } from './healthPlan.js';
import type { CheckObservation } from './healthStore.js';
import { JitteredScheduler, type ScheduledJob, type SchedulerClock } from './scheduler.js';
import type { SavedCheck } from './stateFile.js';

/** A check that runs: its plan, its function and its state. */
export interface RunningCheck extends ScheduledJob {
  planned: PlannedCheck;
  /** Starts a run on the planned target (prepared once: a fingerprint change makes a new check). */
  readonly start: CheckStart;
  readonly state: CheckState;
  readonly createdMs: number;
  inFlight: boolean;
  active: boolean;
  /** Whether this node runs the check (with r-of-n assignment over a shared store, `quorum.ts`; else always). */
  assigned: boolean;
  /** How late the run in flight started (ms). */
  lagMs: number;
  /** Receives the outcome of each run (one function per check, not one per run). */
  readonly done: (outcome: CheckOutcome) => void;
}

/** What a {@link CheckRunner} needs. */
export interface CheckRunnerOptions {
  readonly log: Logger;
  readonly clock: SchedulerClock;
  readonly random?: () => number;
  readonly kinds: CheckKindList;
  /** Where each check's verdict goes when it changes (and when the check starts or ends). */
  readonly observations: StateMap<CheckObservation>;
  readonly metrics: HealthMetrics | undefined;
  /** Called after every check with its outcome and how late it started (benchmarks). */
  readonly onCheck?: (id: string, outcome: CheckOutcome, lagMs: number) => void;
}

/**
 * Runs the checks of a configuration from one jittered scheduler and keeps each one's state
 * (rise/fall, `checkState.ts`). A check still running when it is due again is skipped (counted),
 * never stacked. Each change of a check's status is written to the observations map of the
 * state store, which is how the views learn of it.
 */
export class CheckRunner {
  private readonly checks = new Map<string, RunningCheck>();
  private readonly scheduler: JitteredScheduler;
  private running = false;
  private owns: (checkId: string) => boolean = () => true;

  constructor(private readonly opts: CheckRunnerOptions) {
    this.scheduler = new JitteredScheduler(opts.clock, opts.random);
  }

  /** The checks of the current configuration. */
  all(): IterableIterator<RunningCheck> {
    return this.checks.values();
  }

  /**
   * Adopts the checks of `plan`: keeps those whose monitor and target are unchanged, starts new
   * ones as unknown — or as `restored` says (the state file, same fingerprint) —, stops removed
   * ones. `files`: the files each monitor's kind reads, by monitor name.
   */
  adopt(plan: HealthPlan, files: ReadonlyMap<string, CheckFiles>, restored: Readonly<Record<string, SavedCheck>> | undefined, now: number): void {
    // A check whose monitor changed but whose target did not keeps its last status until the new
    // definition's first result: restarting it as unknown would answer endpoints known to be down
    // (unknown counts as up) for up to an interval after every monitor edit.
    const redefined = new Map<string, CheckState>();
    for (const [id, c] of this.checks) {
      const next = plan.checks.get(id);
      if (next && next.fingerprint !== c.planned.fingerprint && c.state.status !== 'unknown') redefined.set(id, c.state);
      if (!next || next.fingerprint !== c.planned.fingerprint) this.retire(c);
    }
    const runs = new Map<string, CheckRun>();
    for (const p of plan.checks.values()) {
      const existing = this.checks.get(p.id);
      if (existing) {
        existing.planned = p;
        continue;
      }
      const state = unknownCheckState(now);
      const saved = restored?.[p.id];
      const before = redefined.get(p.id);
      if (saved && saved.fingerprint === p.fingerprint) {
        state.status = saved.status;
        state.sinceMs = saved.sinceMs;
        state.lastSuccessMs = saved.lastSuccessMs;
      } else if (before) {
        state.status = before.status;
        state.sinceMs = before.sinceMs;
        state.lastSuccessMs = before.lastSuccessMs;
        state.provisional = true;
      }
      let run = runs.get(p.monitor.name);
      if (!run) runs.set(p.monitor.name, (run = checkFor(p.monitor, files.get(p.monitor.name), this.opts.kinds)));
      this.add(p, state, run, now);
    }
  }

  /**
   * Runs only the checks `owns` names (r-of-n assignment, `quorum.ts`), now and for checks added
   * later. A check this node stops running leaves the scheduler and its verdict leaves the
   * observations map; one it starts running again starts as unknown (its old state is stale).
   */
  assign(owns: (checkId: string) => boolean): void {
    this.owns = owns;
    const now = this.opts.clock.now();
    for (const c of this.checks.values()) {
      const mine = owns(c.planned.id);
      if (mine === c.assigned) continue;
      c.assigned = mine;
      if (mine) {
        Object.assign(c.state, unknownCheckState(now));
        c.active = true;
        this.observe(c);
        if (this.running) this.scheduler.add(c);
      } else {
        c.active = false;
        this.scheduler.remove(c);
        this.opts.observations.delete(c.planned.id);
      }
    }
  }

  /** Starts running checks (each first runs at a random point of its first interval). */
  start(): void {
    if (this.running) return;
    this.running = true;
    for (const c of this.checks.values()) if (c.assigned) this.scheduler.add(c);
  }

  /** Stops every check; results of runs still in flight are ignored. */
  stop(): void {
    this.running = false;
    this.scheduler.stop();
    for (const c of this.checks.values()) c.active = false;
  }

  private add(planned: PlannedCheck, state: CheckState, fn: CheckRun, now: number): void {
    const monitor = this.opts.onCheck;
    const metrics = this.opts.metrics;
    const c: RunningCheck = {
      planned,
      start: fn(planned.target),
      state,
      createdMs: now,
      inFlight: false,
      active: true,
      assigned: this.owns(planned.id),
      intervalMs: planned.monitor.intervalMs,
      jitter: planned.monitor.jitter,
      lagMs: 0,
      run(lagMs) {
        if (!c.active) return;
        if (c.inFlight) {
          metrics?.skipped.inc({ monitor: c.planned.monitor.name });
          return;
        }
        c.inFlight = true;
        c.lagMs = lagMs;
        metrics?.scheduleLagSeconds.observe(lagMs / 1000);
        c.start(c.done);
      },
      // An arrow function: the check's start hands `done` on as a plain callback.
      done: (outcome) => {
        c.inFlight = false;
        monitor?.(c.planned.id, outcome, c.lagMs);
        if (c.active) this.result(c, outcome);
      },
    };
    this.checks.set(planned.id, c);
    if (!c.assigned) {
      c.active = false;
      return;
    }
    this.observe(c);
    if (this.running) this.scheduler.add(c);
  }

  private retire(c: RunningCheck): void {
    c.active = false;
    this.scheduler.remove(c);
    this.checks.delete(c.planned.id);
    this.opts.observations.delete(c.planned.id);
  }

  private result(c: RunningCheck, outcome: CheckOutcome): void {
    const m = c.planned.monitor;
    this.opts.metrics?.observeCheck(m.name, outcome.ok, outcome.latencyMs / 1000);
    const before = c.state.status;
    c.state.lastLatencyMs = outcome.latencyMs;
    if (!applyResult(c.state, outcome.ok, this.opts.clock.now(), m.rise, m.fall, outcome.error)) return;
    this.opts.log.info({ check: c.planned.id, from: before, to: c.state.status, error: outcome.error || undefined }, 'health check state changed');
    this.observe(c);
  }

  /** Writes the check's verdict to the store. */
  private observe(c: RunningCheck): void {
    this.opts.observations.set(c.planned.id, { status: c.state.status, sinceMs: c.state.sinceMs });
  }
}
