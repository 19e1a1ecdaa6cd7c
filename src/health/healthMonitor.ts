import { readFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { AdminOverride, EndpointHealth, HealthStatus, HealthView } from '../state/healthView.js';
import { checkFor, type CheckOutcome, type CheckResources, type CheckRun } from './checks/check.js';
import { applyResult, combineStatus, groupStatus, unknownCheckState, type CheckState } from './checkState.js';
import { HealthMetrics } from './healthMetrics.js';
import { buildHealthPlan, type HealthPlan, type PlannedCheck } from './healthPlan.js';
import { MonitoredHealthView } from './monitoredHealthView.js';
import { JitteredScheduler, systemSchedulerClock, type ScheduledJob, type SchedulerClock } from './scheduler.js';
import { readStateFile, writeStateFile, type LoadedState, type SavedState } from './stateFile.js';

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
}

/** A check that runs: its plan, its function and its state. */
interface RunningCheck extends ScheduledJob {
  planned: PlannedCheck;
  readonly fn: CheckRun;
  readonly state: CheckState;
  readonly createdMs: number;
  inFlight: boolean;
  active: boolean;
}

/** An administrative override request. `none` clears it. */
export type OverrideRequest = AdminOverride | 'none';

const EMPTY_PLAN: HealthPlan = { checks: new Map(), endpoints: [], dcs: [] };

/**
 * Runs the health checks of a configuration and publishes an immutable {@link HealthView} on
 * every change of an endpoint's or data center's state — never per check — so the query path
 * only ever reads a finished view (src/health/README.md).
 *
 * Checks run from one jittered scheduler; a check still running when it is due again is skipped
 * (counted), never stacked. Changes within one event-loop turn are published together.
 * Administrative overrides publish at once. The state file (if configured) is read on the first
 * {@link configure} and written shortly after each change and on {@link stop}.
 */
export class HealthMonitor {
  private plan: HealthPlan = EMPTY_PLAN;
  private readonly checks = new Map<string, RunningCheck>();
  private readonly overrides = new Map<string, AdminOverride>();
  private readonly scheduler: JitteredScheduler;
  private readonly clock: SchedulerClock;
  private readonly metrics: HealthMetrics | undefined;
  private readonly listeners: ((view: MonitoredHealthView) => void)[] = [];
  private current: MonitoredHealthView = new MonitoredHealthView(new Map(), new Map(), new Map(), 'no monitors configured');
  private running = false;
  private publishQueued = false;
  private stateFilePath: string | undefined;
  private stateLoad: LoadedState | undefined;
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

    for (const [id, c] of this.checks) {
      const next = plan.checks.get(id);
      if (!next || next.fingerprint !== c.planned.fingerprint) this.retire(c);
    }
    for (const p of plan.checks.values()) {
      const existing = this.checks.get(p.id);
      if (existing) {
        existing.planned = p;
        continue;
      }
      const state = unknownCheckState(now);
      const restored = saved?.statusesUsed ? saved.state.checks[p.id] : undefined;
      if (restored && restored.fingerprint === p.fingerprint) {
        state.status = restored.status;
        state.sinceMs = restored.sinceMs;
        state.lastSuccessMs = restored.lastSuccessMs;
      }
      this.add(p, state, checkFor(p.monitor, resources.get(p.monitor.name)), now);
    }

    const keys = new Set(plan.endpoints.map((e) => e.key));
    for (const key of this.overrides.keys()) if (!keys.has(key)) this.overrides.delete(key);
    if (saved) {
      for (const [key, o] of Object.entries(saved.state.overrides)) if (keys.has(key)) this.overrides.set(key, o);
    }
    this.plan = plan;
    this.current = this.buildView();
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
    if (!this.plan.endpoints.some((e) => e.key === key)) throw new RangeError(`no enabled endpoint "${key}"`);
    if (override === 'none') this.overrides.delete(key);
    else this.overrides.set(key, override);
    this.opts.log.info({ endpoint: key, override }, 'health override');
    this.publish();
    return this.current;
  }

  /** Stops the checks and writes the state file one last time. */
  async stop(): Promise<void> {
    this.running = false;
    this.scheduler.stop();
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
    for (const e of this.plan.endpoints) {
      let dcs = services.get(e.service);
      if (!dcs) services.set(e.service, (dcs = new Set()));
      dcs.add(e.dc);
    }
    const load = this.stateLoad;
    return {
      stateFile: {
        path: this.stateFilePath ?? null,
        atStart: load === undefined || load.kind === 'none' ? { used: false, reason: load?.reason ?? 'not read' } : { used: load.statusesUsed, ageMs: load.ageMs },
      },
      endpoints: this.plan.endpoints.map((e) => {
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
      datacenters: this.plan.dcs.map((d) => ({ dc: d.name, status: view.hostStatus(d.name), rule: d.rule, wan: d.wan, lan: d.lan })),
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
    for (const e of this.plan.endpoints) {
      if (e.checks.length > 0 || this.overrides.has(e.key)) covered.set(`${e.service}\u0000${e.dc}`, [e.service, e.dc]);
    }
    return {
      hosts: this.plan.dcs.map((d) => [d.name, view.hostStatus(d.name)]),
      services: [...covered.values()].map(([service, dc]) => [service, dc, view.serviceStatus(service, dc)]),
    };
  }

  private add(planned: PlannedCheck, state: CheckState, fn: CheckRun, now: number): void {
    const monitor = this.opts.onCheck;
    const self = this;
    const c: RunningCheck = {
      planned,
      fn,
      state,
      createdMs: now,
      inFlight: false,
      active: true,
      intervalMs: planned.monitor.intervalMs,
      jitter: planned.monitor.jitter,
      run(lagMs) {
        if (!c.active) return;
        if (c.inFlight) {
          self.metrics?.skipped.inc({ monitor: c.planned.monitor.name });
          return;
        }
        c.inFlight = true;
        self.metrics?.scheduleLagSeconds.observe(lagMs / 1000);
        void c.fn(c.planned.target).then((outcome) => {
          c.inFlight = false;
          monitor?.(c.planned.id, outcome, lagMs);
          if (c.active) self.result(c, outcome);
        });
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
    this.metrics?.checkSeconds.observe({ monitor: m.name, result: outcome.ok ? 'ok' : 'fail' }, outcome.latencyMs / 1000);
    const before = c.state.status;
    if (!applyResult(c.state, outcome.ok, this.clock.now(), m.rise, m.fall, outcome.error)) return;
    this.opts.log.info({ check: c.planned.id, from: before, to: c.state.status, error: outcome.error || undefined }, 'health check state changed');
    this.queuePublish();
  }

  private queuePublish(): void {
    if (this.publishQueued) return;
    this.publishQueued = true;
    setImmediate(() => {
      this.publishQueued = false;
      if (this.running) this.publish();
    });
  }

  private publish(): void {
    const previous = this.current;
    const view = this.buildView();
    this.current = view;
    if (this.metrics) {
      for (const [key, h] of view.entries()) {
        if (previous.endpointHealth(key).status !== h.status) this.metrics.transitions.inc({ endpoint: key, to: h.status });
      }
    }
    for (const fn of this.listeners) fn(view);
    this.queueStateWrite();
  }

  private buildView(): MonitoredHealthView {
    const statusOf = (id: string): HealthStatus => this.checks.get(id)?.state.status ?? 'unknown';
    const endpoints = new Map<string, EndpointHealth>();
    const services = new Map<string, Map<string, HealthStatus>>();
    let up = 0;
    let down = 0;
    let unknown = 0;
    for (const e of this.plan.endpoints) {
      const override = this.overrides.get(e.key);
      let status: HealthStatus = 'up';
      if (e.checks.length > 0 || override) {
        status = combineStatus(e.checks.map(statusOf));
        let sinceMs = 0;
        for (const id of e.checks) {
          const st = this.checks.get(id)?.state;
          if (st && st.status === status) sinceMs = Math.max(sinceMs, st.sinceMs);
        }
        endpoints.set(e.key, { status, override, sinceMs });
        if (e.checks.length > 0) status === 'up' ? up++ : status === 'down' ? down++ : unknown++;
      }
      const effective: HealthStatus = override === 'force-up' ? 'up' : override ? 'down' : status;
      let perDc = services.get(e.service);
      if (!perDc) services.set(e.service, (perDc = new Map()));
      const was = perDc.get(e.dc);
      perDc.set(e.dc, was === 'up' || effective === 'up' ? 'up' : was === 'unknown' || effective === 'unknown' ? 'unknown' : 'down');
    }
    const hosts = new Map<string, HealthStatus>();
    for (const d of this.plan.dcs) {
      const groups: HealthStatus[] = [];
      for (const g of [d.wan, d.lan]) {
        const s = groupStatus(d.rule, g.map(statusOf));
        if (s) groups.push(s);
      }
      hosts.set(d.name, combineStatus(groups));
    }
    const monitored = up + down + unknown;
    const description =
      monitored === 0 && this.overrides.size === 0
        ? 'no monitors configured'
        : `${monitored} monitored endpoints: ${up} up, ${down} down, ${unknown} unknown; ${this.overrides.size} overrides; ${hosts.size} data centers with check points`;
    return new MonitoredHealthView(endpoints, hosts, services, description);
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
      await writeStateFile(path, state);
    } catch (e) {
      this.opts.log.warn({ err: e, path }, 'cannot write the health state file');
    }
  }

  private logStateLoad(load: LoadedState, maxAgeMs: number): void {
    const log = this.opts.log;
    if (load.kind === 'none') {
      if (this.stateFilePath !== undefined) log.info({ path: this.stateFilePath, reason: load.reason }, 'health state file not used');
    } else if (load.statusesUsed) {
      log.info({ path: this.stateFilePath, ageMs: load.ageMs, checks: Object.keys(load.state.checks).length }, 'health state restored from the state file');
    } else {
      log.warn({ path: this.stateFilePath, ageMs: load.ageMs, maxAgeMs }, 'health state file too old: checks start unknown (overrides kept)');
    }
  }
}

/** The JSON of GET /health. */
export interface HealthReport {
  stateFile: { path: string | null; atStart: { used: boolean; reason?: string; ageMs?: number } };
  endpoints: { endpoint: string; status: HealthStatus; override: AdminOverride | null; since: string | null; checks: readonly string[] }[];
  checks: { check: string; monitor: string; type: string; status: HealthStatus; since: string; secondsSinceSuccess: number | null; lastError: string | null }[];
  datacenters: { dc: string; status: HealthStatus; rule: string; wan: readonly string[]; lan: readonly string[] }[];
  services: { service: string; dc: string; status: HealthStatus }[];
}
