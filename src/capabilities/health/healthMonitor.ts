import { readFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { dirname, resolve as resolvePath } from 'node:path';
import type { Registry } from 'prom-client';
import type { Config } from '../../process/configSchema.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { UNMONITORED_UP, type AdminOverride, type EndpointHealth, type HealthStatus, type HealthView } from '../../core/views/healthView.js';
import { checkFor, type CheckOutcome, type CheckResources, type CheckRun, type CheckStart } from './checks/check.js';
import { applyResult, combineStatus, groupStatus, unknownCheckState, type CheckState } from './checkState.js';
import { HealthMetrics } from './healthMetrics.js';
import { buildHealthPlan, type HealthPlan, type PlannedCheck } from './healthPlan.js';
import { MonitoredHealthView, type ViewIndex } from './monitoredHealthView.js';
import { JitteredScheduler, systemSchedulerClock, type ScheduledJob, type SchedulerClock } from './scheduler.js';
import { readStateFile, STATE_FILE_FUTURE_TOLERANCE_MS, writeStateFile, type LoadedState, type SavedState } from './stateFile.js';

/** Options for the process and for tests. */
export interface HealthMonitorOptions {
  readonly log: Logger;
  /** Registry for the health metrics (the engine's); none: no metrics. */
  readonly registry?: Registry;
  readonly clock?: SchedulerClock;
  readonly random?: () => number;
  /** Called after every check with its outcome and how late it started (benchmarks). */
  readonly onCheck?: (id: string, outcome: CheckOutcome, lagMs: number) => void;
  /** Delay (ms) between a health change and the state file write, so bursts write once (default 200). */
  readonly stateWriteDelayMs?: number;
  /** Shortest time (ms) between two published views; changes in between are published together (default 50). */
  readonly minPublishIntervalMs?: number;
}

/** A configuration's checks, endpoints and data centers with the indexes that relate them. */
interface Layout {
  readonly plan: HealthPlan;
  readonly index: ViewIndex;
  /** By endpoint position: its service slot. */
  readonly endpointService: readonly number[];
  /** By service slot: its endpoint positions. */
  readonly serviceEndpoints: readonly number[][];
  /** Check id → endpoint positions using it. */
  readonly checkEndpoints: ReadonlyMap<string, readonly number[]>;
  /** Check id → positions in `plan.dcs` using it as a check point. */
  readonly checkDcs: ReadonlyMap<string, readonly number[]>;
}

/** A check that runs: its plan, its function and its state. */
interface RunningCheck extends ScheduledJob {
  planned: PlannedCheck;
  /** Starts a run on the planned target (prepared once: a fingerprint change makes a new check). */
  readonly start: CheckStart;
  readonly state: CheckState;
  readonly createdMs: number;
  inFlight: boolean;
  active: boolean;
  /** How late the run in flight started (ms). */
  lagMs: number;
  /** Receives the outcome of each run (one function per check, not one per run). */
  readonly done: (outcome: CheckOutcome) => void;
}

/** An administrative override request. `none` clears it. */
export type OverrideRequest = AdminOverride | 'none';


/**
 * Runs the health checks of a configuration and publishes an immutable {@link HealthView} on
 * every change of an endpoint's or data center's state — never per check — so the query path
 * only ever reads a finished view (src/capabilities/health/README.md).
 *
 * Checks run from one jittered scheduler; a check still running when it is due again is skipped
 * (counted), never stacked. Changes are published at most every `minPublishIntervalMs` (50 ms),
 * together. Administrative overrides publish at once. The state file (if configured) is read on the first
 * {@link configure} and written shortly after each change and on {@link stop}.
 */
export class HealthMonitor {
  private layout: Layout = layoutOf({ checks: new Map(), endpoints: [], dcs: [] });
  private readonly checks = new Map<string, RunningCheck>();
  private readonly overrides = new Map<string, AdminOverride>();
  private readonly scheduler: JitteredScheduler;
  private readonly clock: SchedulerClock;
  private readonly metrics: HealthMetrics | undefined;
  private readonly listeners: ((view: MonitoredHealthView) => void)[] = [];
  /** The state being built (mutable); each view gets copies of the arrays. */
  private endpointHealth: EndpointHealth[] = [];
  private serviceStatus: HealthStatus[] = [];
  private hostStatus = new Map<string, HealthStatus>();
  private readonly dirtyChecks = new Set<string>();
  private current: MonitoredHealthView = this.snapshotView();
  private running = false;
  private publishTimer: unknown;
  private lastPublishMs = -Infinity;
  private stateFilePath: string | undefined;
  private stateLoad: LoadedState | undefined;
  /** An unusable state file found at start has been moved aside (done once, before the first write). */
  private unusableKeptAside = false;
  /** The message of the last failed state write, so a repeated failure is logged once. */
  private stateWriteError: string | undefined;
  private stateWriteTimer: NodeJS.Timeout | undefined;
  private stateWriting: Promise<void> = Promise.resolve();

  constructor(private readonly opts: HealthMonitorOptions) {
    this.clock = opts.clock ?? systemSchedulerClock;
    this.scheduler = new JitteredScheduler(this.clock, opts.random);
    this.metrics = opts.registry
      ? new HealthMetrics(opts.registry, {
          endpoints: () => this.current.entries(),
          dataCenters: () => this.current.dataCenters(),
          checks: () => [...this.checks.values()].map((c) => ({ id: c.planned.id, monitor: c.planned.monitor.name, lastSuccessMs: c.state.lastSuccessMs, createdMs: c.createdMs })),
          now: () => this.clock.now(),
        })
      : undefined;
  }

  /** The view queries should run on now. */
  get view(): HealthView {
    return this.current;
  }

  /** Calls `fn` with each new view published after a health change or an override. */
  onChange(fn: (view: HealthView) => void): void {
    this.listeners.push(fn);
  }

  /**
   * Adopts a (new) configuration: keeps the state of checks whose monitor and target are
   * unchanged, starts new ones as unknown (or as the state file says, on the first call), stops
   * removed ones, drops overrides of endpoints that no longer exist. Returns the view for the
   * snapshot being built; listeners are not called.
   * @throws Error naming the field when an https monitor's `caFile` cannot be read (nothing changes).
   */
  configure(config: Config, configFile: string): HealthView {
    const baseDir = dirname(configFile);
    const resources = new Map<string, CheckResources>();
    config.health.monitors.forEach((m, i) => {
      if (m.type !== 'https' || m.caFile === undefined) return;
      try {
        resources.set(m.name, { ca: readFileSync(resolvePath(baseDir, m.caFile)) });
      } catch (e) {
        throw new Error(`health.monitors[${i}].caFile: cannot read "${m.caFile}": ${(e as Error).message}`);
      }
    });
    const plan = buildHealthPlan(config);
    const now = this.clock.now();

    const firstConfigure = this.stateLoad === undefined;
    this.stateFilePath = config.health.stateFile !== undefined ? resolvePath(baseDir, config.health.stateFile) : undefined;
    if (firstConfigure) {
      this.stateLoad = this.stateFilePath !== undefined ? readStateFile(this.stateFilePath, now, config.health.stateMaxAgeMs) : { kind: 'none', reason: 'no state file configured' };
      this.logStateLoad(this.stateLoad, config.health.stateMaxAgeMs);
    }
    const saved = firstConfigure && this.stateLoad?.kind === 'loaded' ? this.stateLoad : undefined;

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
      const restored = saved?.statusesUsed ? saved.state.checks[p.id] : undefined;
      const before = redefined.get(p.id);
      if (restored && restored.fingerprint === p.fingerprint) {
        state.status = restored.status;
        state.sinceMs = restored.sinceMs;
        state.lastSuccessMs = restored.lastSuccessMs;
      } else if (before) {
        state.status = before.status;
        state.sinceMs = before.sinceMs;
        state.lastSuccessMs = before.lastSuccessMs;
        state.provisional = true;
      }
      let run = runs.get(p.monitor.name);
      if (!run) runs.set(p.monitor.name, (run = checkFor(p.monitor, resources.get(p.monitor.name))));
      this.add(p, state, run, now);
    }

    const layout = layoutOf(plan);
    for (const [key, override] of this.overrides) {
      if (layout.index.endpoints.has(key)) continue;
      this.overrides.delete(key);
      this.opts.log.warn({ endpoint: key, override }, 'administrative override dropped: the endpoint is no longer in the configuration');
    }
    if (saved) {
      for (const [key, o] of Object.entries(saved.state.overrides)) if (layout.index.endpoints.has(key)) this.overrides.set(key, o);
    }
    this.layout = layout;
    this.endpointHealth = plan.endpoints.map((_, i) => this.endpointHealthAt(i));
    this.serviceStatus = layout.serviceEndpoints.map((_, slot) => this.serviceStatusAt(slot));
    this.hostStatus = new Map(plan.dcs.map((_, d) => [plan.dcs[d]!.name, this.hostStatusAt(d)]));
    this.dirtyChecks.clear();
    this.current = this.snapshotView();
    return this.current;
  }

  /** Starts running checks (each first runs at a random point of its first interval). */
  start(): void {
    if (this.running) return;
    this.running = true;
    for (const c of this.checks.values()) this.scheduler.add(c);
  }

  /**
   * Sets or clears (`none`) an endpoint's administrative override and publishes the new view
   * before returning, so the next query sees it.
   * @throws RangeError when no enabled endpoint has the key.
   */
  setOverride(key: string, override: OverrideRequest): HealthView {
    const i = this.layout.index.endpoints.get(key);
    if (i === undefined) throw new RangeError(`no enabled endpoint "${key}"`);
    if (override === 'none') this.overrides.delete(key);
    else this.overrides.set(key, override);
    this.opts.log.info({ endpoint: key, override }, 'health override');
    this.endpointHealth[i] = this.endpointHealthAt(i);
    const slot = this.layout.endpointService[i]!;
    this.serviceStatus[slot] = this.serviceStatusAt(slot);
    this.publish();
    return this.current;
  }

  /** Stops the checks and writes the state file one last time. */
  async stop(): Promise<void> {
    this.running = false;
    this.scheduler.stop();
    if (this.publishTimer !== undefined) this.clock.clearTimer(this.publishTimer);
    this.publishTimer = undefined;
    for (const c of this.checks.values()) c.active = false;
    clearTimeout(this.stateWriteTimer);
    this.stateWriteTimer = undefined;
    await this.stateWriting;
    await this.writeState();
  }

  /** Everything /health shows: checks, endpoints, data centers, services, the state file. */
  report(): HealthReport {
    const now = this.clock.now();
    const view = this.current;
    const services = new Map<string, Set<string>>();
    for (const e of this.layout.plan.endpoints) {
      let dcs = services.get(e.service);
      if (!dcs) services.set(e.service, (dcs = new Set()));
      dcs.add(e.dc);
    }
    const load = this.stateLoad;
    return {
      stateFile: {
        path: this.stateFilePath ?? null,
        atStart:
          load === undefined || load.kind !== 'loaded'
            ? { used: false, reason: load?.reason ?? 'not read', ...(load?.kind === 'unusable' && load.keepAsidePath !== undefined ? { keptAs: load.keepAsidePath } : {}) }
            : { used: load.statusesUsed, ageMs: load.ageMs },
      },
      endpoints: this.layout.plan.endpoints.map((e) => {
        const h = view.endpointHealth(e.key);
        return { endpoint: e.key, status: h.status, override: h.override ?? null, since: h.sinceMs > 0 ? new Date(h.sinceMs).toISOString() : null, checks: e.checks };
      }),
      checks: [...this.checks.values()].map((c) => ({
        check: c.planned.id,
        monitor: c.planned.monitor.name,
        type: c.planned.monitor.type,
        status: c.state.status,
        since: new Date(c.state.sinceMs).toISOString(),
        secondsSinceSuccess: c.state.lastSuccessMs > 0 ? (now - c.state.lastSuccessMs) / 1000 : null,
        lastError: c.state.lastError || null,
      })),
      datacenters: this.layout.plan.dcs.map((d) => ({ dc: d.name, status: view.hostStatus(d.name), rule: d.rule, wan: d.wan, lan: d.lan })),
      services: [...services].flatMap(([service, dcs]) => [...dcs].map((dc) => ({ service, dc, status: view.serviceStatus(service, dc) }))),
    };
  }

  /**
   * The statuses monitors cover: every data center with check points (`host.status`), and every
   * (service, data center) with a monitored or overridden endpoint (`service.status`).
   */
  coveredStatuses(): { hosts: [dc: string, status: HealthStatus][]; services: [service: string, dc: string, status: HealthStatus][] } {
    const view = this.current;
    const covered = new Map<string, [string, string]>();
    for (const e of this.layout.plan.endpoints) {
      if (e.checks.length > 0 || this.overrides.has(e.key)) covered.set(`${e.service}\u0000${e.dc}`, [e.service, e.dc]);
    }
    return {
      hosts: this.layout.plan.dcs.map((d) => [d.name, view.hostStatus(d.name)]),
      services: [...covered.values()].map(([service, dc]) => [service, dc, view.serviceStatus(service, dc)]),
    };
  }

  private add(planned: PlannedCheck, state: CheckState, fn: CheckRun, now: number): void {
    const monitor = this.opts.onCheck;
    const self = this;
    const c: RunningCheck = {
      planned,
      start: fn(planned.target),
      state,
      createdMs: now,
      inFlight: false,
      active: true,
      intervalMs: planned.monitor.intervalMs,
      jitter: planned.monitor.jitter,
      lagMs: 0,
      run(lagMs) {
        if (!c.active) return;
        if (c.inFlight) {
          self.metrics?.skipped.inc({ monitor: c.planned.monitor.name });
          return;
        }
        c.inFlight = true;
        c.lagMs = lagMs;
        self.metrics?.scheduleLagSeconds.observe(lagMs / 1000);
        c.start(c.done);
      },
      done(outcome) {
        c.inFlight = false;
        monitor?.(c.planned.id, outcome, c.lagMs);
        if (c.active) self.result(c, outcome);
      },
    };
    this.checks.set(planned.id, c);
    if (this.running) this.scheduler.add(c);
  }

  private retire(c: RunningCheck): void {
    c.active = false;
    this.scheduler.remove(c);
    this.checks.delete(c.planned.id);
  }

  private result(c: RunningCheck, outcome: CheckOutcome): void {
    const m = c.planned.monitor;
    this.metrics?.observeCheck(m.name, outcome.ok, outcome.latencyMs / 1000);
    const before = c.state.status;
    if (!applyResult(c.state, outcome.ok, this.clock.now(), m.rise, m.fall, outcome.error)) return;
    this.opts.log.info({ check: c.planned.id, from: before, to: c.state.status, error: outcome.error || undefined }, 'health check state changed');
    this.dirtyChecks.add(c.planned.id);
    this.queuePublish();
  }

  /** Publishes soon: at once when the last view is older than the minimum interval, else when it is. */
  private queuePublish(): void {
    if (this.publishTimer !== undefined) return;
    const wait = Math.max(0, this.lastPublishMs + (this.opts.minPublishIntervalMs ?? 50) - this.clock.monotonic());
    this.publishTimer = this.clock.setTimer(() => {
      this.publishTimer = undefined;
      if (this.running) this.publish();
    }, wait);
  }

  /** Applies the changed checks to the endpoints, services and data centers using them, then publishes a view. */
  private publish(): void {
    const { checkEndpoints, checkDcs, endpointService, plan } = this.layout;
    const services = new Set<number>();
    for (const id of this.dirtyChecks) {
      for (const i of checkEndpoints.get(id) ?? []) {
        const before = this.endpointHealth[i]!;
        const after = this.endpointHealthAt(i);
        this.endpointHealth[i] = after;
        if (before.status !== after.status) this.metrics?.transitions.inc({ endpoint: plan.endpoints[i]!.key, to: after.status });
        services.add(endpointService[i]!);
      }
      for (const d of checkDcs.get(id) ?? []) this.hostStatus.set(plan.dcs[d]!.name, this.hostStatusAt(d));
    }
    this.dirtyChecks.clear();
    for (const slot of services) this.serviceStatus[slot] = this.serviceStatusAt(slot);
    this.lastPublishMs = this.clock.monotonic();
    this.current = this.snapshotView();
    for (const fn of this.listeners) fn(this.current);
    this.queueStateWrite();
  }

  /** A view over copies of the current arrays. */
  private snapshotView(): MonitoredHealthView {
    return new MonitoredHealthView(this.layout.index, this.endpointHealth.slice(), this.serviceStatus.slice(), new Map(this.hostStatus));
  }

  /** The health of the endpoint at position `i` from its checks and override. */
  private endpointHealthAt(i: number): EndpointHealth {
    const e = this.layout.plan.endpoints[i]!;
    const override = this.overrides.get(e.key);
    if (e.checks.length === 0) return override ? { status: 'up', override, sinceMs: 0 } : UNMONITORED_UP;
    let status: HealthStatus = 'up';
    for (const id of e.checks) {
      const s = this.checks.get(id)?.state.status ?? 'unknown';
      if (s === 'down') status = 'down';
      else if (s === 'unknown' && status === 'up') status = 'unknown';
    }
    let sinceMs = 0;
    for (const id of e.checks) {
      const st = this.checks.get(id)?.state;
      if (st && st.status === status && st.sinceMs > sinceMs) sinceMs = st.sinceMs;
    }
    const prev = this.endpointHealth[i];
    if (prev && prev.status === status && prev.override === override && prev.sinceMs === sinceMs) return prev;
    return { status, override, sinceMs };
  }

  /** Up when one endpoint of the slot is up (or forced up), unknown when none is but one is unknown, else down. */
  private serviceStatusAt(slot: number): HealthStatus {
    let result: HealthStatus = 'down';
    for (const i of this.layout.serviceEndpoints[slot]!) {
      const h = this.endpointHealth[i]!;
      const s: HealthStatus = h.override === 'force-up' ? 'up' : h.override ? 'down' : h.status;
      if (s === 'up') return 'up';
      if (s === 'unknown') result = 'unknown';
    }
    return result;
  }

  /** The composite status of the data center at position `d` of the plan. */
  private hostStatusAt(d: number): HealthStatus {
    const dc = this.layout.plan.dcs[d]!;
    const statusOf = (id: string): HealthStatus => this.checks.get(id)?.state.status ?? 'unknown';
    const groups: HealthStatus[] = [];
    for (const g of [dc.wan, dc.lan]) {
      const s = groupStatus(dc.rule, g.map(statusOf));
      if (s) groups.push(s);
    }
    return combineStatus(groups);
  }

  private queueStateWrite(): void {
    if (this.stateFilePath === undefined || this.stateWriteTimer) return;
    this.stateWriteTimer = setTimeout(() => {
      this.stateWriteTimer = undefined;
      this.stateWriting = this.stateWriting.then(() => this.writeState());
    }, this.opts.stateWriteDelayMs ?? 200);
    this.stateWriteTimer.unref();
  }

  private async writeState(): Promise<void> {
    const path = this.stateFilePath;
    if (path === undefined) return;
    const state: SavedState = { version: 1, writtenAtMs: this.clock.now(), checks: {}, overrides: Object.fromEntries(this.overrides) };
    for (const c of this.checks.values()) {
      const s = c.state;
      if (s.status === 'unknown') continue;
      state.checks[c.planned.id] = { fingerprint: c.planned.fingerprint, status: s.status, sinceMs: s.sinceMs, lastSuccessMs: s.lastSuccessMs };
    }
    try {
      await this.keepUnusableStateFileAside();
      await writeStateFile(path, state);
    } catch (e) {
      // Checks that flap write every 200 ms: a lasting failure (a directory at the path, a full
      // disk) is logged once, not with every change; another error or a success is logged again.
      const error = (e as Error).message;
      if (error !== this.stateWriteError) this.opts.log.warn({ path, error }, 'cannot write the health state file (retried at each change; logged again when the error changes)');
      this.stateWriteError = error;
      return;
    }
    if (this.stateWriteError !== undefined) this.opts.log.info({ path }, 'health state file written again');
    this.stateWriteError = undefined;
  }

  /**
   * Moves the unusable state file found at start to its keep-aside path before the first new state
   * replaces it: it may hold overrides an operator wants back. When the move fails the write is
   * not done either (the file stays as it was) and the next write tries again.
   * @throws Error when the file is there but cannot be moved.
   */
  private async keepUnusableStateFileAside(): Promise<void> {
    const load = this.stateLoad;
    if (load?.kind !== 'unusable' || load.keepAsidePath === undefined || this.unusableKeptAside) return;
    try {
      await rename(load.path, load.keepAsidePath);
      this.opts.log.warn({ path: load.path, keptAs: load.keepAsidePath }, 'unusable health state file kept aside before writing a new one');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot keep the unusable state file aside as ${load.keepAsidePath}: ${(e as Error).message}`);
    }
    this.unusableKeptAside = true;
  }

  private logStateLoad(load: LoadedState, maxAgeMs: number): void {
    const log = this.opts.log;
    if (load.kind === 'none') {
      if (this.stateFilePath !== undefined) log.info({ path: this.stateFilePath, reason: load.reason }, 'health state file not used');
    } else if (load.kind === 'unusable') {
      log.warn(
        { path: load.path, reason: load.reason, keptAs: load.keepAsidePath },
        load.keepAsidePath !== undefined
          ? 'health state file unusable: checks start unknown, its overrides are not applied; before the first new state is written it is moved to keptAs (recover overrides from it by hand)'
          : 'health state file unusable: checks start unknown, its overrides are not applied',
      );
    } else if (load.ageMs < -STATE_FILE_FUTURE_TOLERANCE_MS) {
      log.warn({ path: this.stateFilePath, aheadMs: -load.ageMs, toleranceMs: STATE_FILE_FUTURE_TOLERANCE_MS }, 'health state file written in the future (clock went back?): checks start unknown (overrides kept)');
    } else if (load.statusesUsed) {
      log.info({ path: this.stateFilePath, ageMs: load.ageMs, checks: Object.keys(load.state.checks).length }, 'health state restored from the state file');
    } else {
      log.warn({ path: this.stateFilePath, ageMs: load.ageMs, maxAgeMs }, 'health state file too old: checks start unknown (overrides kept)');
    }
  }
}

/** The JSON of GET /health. */
export interface HealthReport {
  /** `ageMs` is negative for a file written in the future; `keptAs`: where an unusable file is moved before the first write. */
  stateFile: { path: string | null; atStart: { used: boolean; reason?: string; ageMs?: number; keptAs?: string } };
  endpoints: { endpoint: string; status: HealthStatus; override: AdminOverride | null; since: string | null; checks: readonly string[] }[];
  checks: { check: string; monitor: string; type: string; status: HealthStatus; since: string; secondsSinceSuccess: number | null; lastError: string | null }[];
  datacenters: { dc: string; status: HealthStatus; rule: string; wan: readonly string[]; lan: readonly string[] }[];
  services: { service: string; dc: string; status: HealthStatus }[];
}

/** Positions and cross-references of a plan, computed once per configuration. */
function layoutOf(plan: HealthPlan): Layout {
  const endpoints = new Map<string, number>();
  const services = new Map<string, Map<string, number>>();
  const endpointService: number[] = [];
  const serviceEndpoints: number[][] = [];
  const checkEndpoints = new Map<string, number[]>();
  const checkDcs = new Map<string, number[]>();
  plan.endpoints.forEach((e, i) => {
    endpoints.set(e.key, i);
    let perDc = services.get(e.service);
    if (!perDc) services.set(e.service, (perDc = new Map()));
    let slot = perDc.get(e.dc);
    if (slot === undefined) {
      slot = serviceEndpoints.length;
      perDc.set(e.dc, slot);
      serviceEndpoints.push([]);
    }
    serviceEndpoints[slot]!.push(i);
    endpointService.push(slot);
    for (const id of e.checks) {
      const list = checkEndpoints.get(id);
      if (list) list.push(i);
      else checkEndpoints.set(id, [i]);
    }
  });
  plan.dcs.forEach((d, di) => {
    for (const id of [...d.wan, ...d.lan]) {
      const list = checkDcs.get(id);
      if (!list) checkDcs.set(id, [di]);
      else if (!list.includes(di)) list.push(di);
    }
  });
  return {
    plan,
    index: { endpoints, services, monitored: plan.endpoints.map((e) => e.checks.length > 0) },
    endpointService,
    serviceEndpoints,
    checkEndpoints,
    checkDcs,
  };
}
