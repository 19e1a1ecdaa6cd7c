import { dirname, resolve as resolvePath } from 'node:path';
import type { Registry } from 'prom-client';
import { InProcessStateStore, type StateStore } from '../../core/contracts/stateStore.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { HealthStatus, HealthView } from '../../core/views/healthView.js';
import type { CheckOutcome } from './checks/check.js';
import { CHECK_KINDS, type CheckKindList } from './checks/registry.js';
import { CheckRunner } from './checkRunner.js';
import type { HealthConfigInput } from './healthConfig.js';
import { layoutOf } from './healthLayout.js';
import { HealthMetrics } from './healthMetrics.js';
import { buildHealthPlan } from './healthPlan.js';
import { healthReport, healthReportSteps, type HealthReport, type HealthReportInput } from './healthReport.js';
import { runInSlices } from '../../pipeline/selection/steps.js';
import { healthMaps } from './healthStore.js';
import { readMonitorFiles } from './monitorFiles.js';
import { matchesEndpoint, type EndpointSelector } from './endpointSelector.js';
import { QUORUM_DEFAULTS, QuorumDecider } from './quorum.js';
import { Overrides, type OverrideRequest } from './overrides.js';
import { systemSchedulerClock, type SchedulerClock } from './scheduler.js';
import type { SavedState } from './stateFile.js';
import { StateFileKeeper } from './stateFileKeeper.js';
import { ViewPublisher } from './viewPublisher.js';

export type { HealthReport } from './healthReport.js';
export type { OverrideRequest } from './overrides.js';

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
  /** Where check verdicts and overrides are kept (default: a new {@link InProcessStateStore}). */
  readonly store?: StateStore;
  /** The check kinds monitors may have (default: the engine's, `checks/registry.ts`). */
  readonly kinds?: CheckKindList;
}

/**
 * Runs the health checks of a configuration and publishes an immutable {@link HealthView} on
 * every change of an endpoint's or data center's state — never per check — so the query path
 * only ever reads a finished view (src/capabilities/health/README.md).
 *
 * A facade over four jobs: running the checks (`checkRunner.ts`), the overrides (`overrides.ts`),
 * the state file (`stateFileKeeper.ts`) and publishing views (`viewPublisher.ts`). Check verdicts
 * and overrides go through the state store, which the publisher watches. Changes are published at
 * most every `minPublishIntervalMs` (50 ms), together; overrides publish at once. The state file
 * (if configured) is read on the first {@link configure} and written shortly after each change
 * and on {@link stop}.
 */
export class HealthMonitor {
  private readonly clock: SchedulerClock;
  private readonly kinds: CheckKindList;
  private readonly runner: CheckRunner;
  private readonly overrides: Overrides;
  private readonly stateFile: StateFileKeeper;
  private readonly publisher: ViewPublisher;
  private readonly quorum: QuorumDecider | undefined;

  constructor(opts: HealthMonitorOptions) {
    const clock = (this.clock = opts.clock ?? systemSchedulerClock);
    this.kinds = opts.kinds ?? CHECK_KINDS;
    const store = opts.store ?? new InProcessStateStore();
    const maps = healthMaps(store);
    // A shared store: each node's verdicts are votes and the quorum decides (quorum.ts); the
    // embedded store keeps today's single-node path unchanged.
    this.quorum =
      store.connection().state === 'embedded' ? undefined : new QuorumDecider(store, clock, (status, basis) => metrics?.observeDecision(status, basis));
    const overrides = maps.overrides;
    const quorum = this.quorum;
    // The metrics read the runner and the publisher at scrape time, once both exist.
    const metrics = opts.registry
      ? new HealthMetrics(opts.registry, {
          endpoints: () => this.publisher.view.entries(),
          dataCenters: () => this.publisher.view.dataCenters(),
          checks: () =>
            [...this.runner.all()].map((c) => ({
              id: c.planned.id,
              monitor: c.planned.monitor.name,
              lastSuccessMs: c.state.lastSuccessMs,
              createdMs: c.createdMs,
            })),
          now: () => clock.now(),
          ...(quorum ? { quorum: () => ({ alone: quorum.decidingAlone, outvoted: quorum.outvoted(), late: quorum.lateVoteCount }) } : {}),
        })
      : undefined;
    this.runner = new CheckRunner({
      log: opts.log,
      clock,
      random: opts.random,
      kinds: this.kinds,
      observations: this.quorum?.local ?? maps.observations,
      metrics,
      onCheck: opts.onCheck,
    });
    if (quorum) {
      // r-of-n checking: the runner runs the checks the quorum assigns to this node.
      const owns = (id: string): boolean => quorum.owns(id);
      this.runner.assign(owns);
      quorum.onAssignment(() => this.runner.assign(owns));
    }
    this.overrides = new Overrides(overrides, opts.log);
    this.stateFile = new StateFileKeeper({ log: opts.log, writeDelayMs: opts.stateWriteDelayMs ?? 200, state: () => this.savedState() });
    this.publisher = new ViewPublisher({
      clock,
      observations: this.quorum?.decided ?? maps.observations,
      overrides,
      metrics,
      minPublishIntervalMs: opts.minPublishIntervalMs ?? 50,
      published: () => this.stateFile.queueWrite(),
    });
  }

  /** The view queries should run on now. */
  get view(): HealthView {
    return this.publisher.view;
  }

  /** Calls `fn` with each new view published after a health change or an override. */
  onChange(fn: (view: HealthView) => void): void {
    this.publisher.onChange(fn);
  }

  /**
   * Adopts a (new) configuration: keeps the state of checks whose monitor and target are
   * unchanged, starts new ones as unknown (or as the state file says, on the first call), stops
   * removed ones, drops overrides of endpoints that no longer exist. Returns the view for the
   * snapshot being built; listeners are not called.
   * @throws Error naming the field when a file a monitor names (an https monitor's `caFile`) cannot be read (nothing changes).
   */
  configure(config: HealthConfigInput, configFile: string): HealthView {
    const baseDir = dirname(configFile);
    const files = readMonitorFiles(config.health.monitors, baseDir, this.kinds);
    const plan = buildHealthPlan(config, this.kinds);
    const now = this.clock.now();
    const statePath = config.health.stateFile !== undefined ? resolvePath(baseDir, config.health.stateFile) : undefined;
    const saved = this.stateFile.configure(statePath, now, config.health.stateMaxAgeMs);
    const layout = layoutOf(plan);
    const q = config.health.quorum ?? {
      observers: QUORUM_DEFAULTS.observers,
      voteTtlSeconds: QUORUM_DEFAULTS.voteTtlMs / 1000,
      graceSeconds: QUORUM_DEFAULTS.graceMs / 1000,
    };
    return this.publisher.adopt(layout, () => {
      this.quorum?.configure({
        observers: q.observers,
        voteTtlMs: q.voteTtlSeconds * 1000,
        graceMs: q.graceSeconds * 1000,
        checkers: q.checkers,
        longestCheckMs: Math.max(0, ...[...plan.checks.values()].map((c) => c.monitor.intervalMs + c.monitor.timeoutMs)),
      });
      this.runner.adopt(plan, files, saved?.statusesUsed ? saved.state.checks : undefined, now);
      this.overrides.retain(layout.index.endpoints);
      if (saved) this.overrides.restore(saved.state.overrides, layout.index.endpoints);
    });
  }

  /** Starts running checks (each first runs at a random point of its first interval). */
  start(): void {
    this.publisher.start();
    this.runner.start();
    this.quorum?.start();
  }

  /**
   * Sets or clears (`none`) an endpoint's administrative override and publishes the new view
   * before returning, so the next query sees it.
   * @throws RangeError when no enabled endpoint has the key.
   */
  setOverride(key: string, override: OverrideRequest): HealthView {
    if (!this.publisher.currentLayout.index.endpoints.has(key)) throw new RangeError(`no enabled endpoint "${key}"`);
    // A store change publishes through the publisher's watch; a request that changed nothing publishes too.
    if (!this.overrides.request(key, override)) this.publisher.overrideChanged(key);
    return this.publisher.view;
  }

  /**
   * Sets or clears (`none`) the override of every endpoint `select` matches among the enabled
   * endpoints (`endpointSelector.ts`: a data center, a glob over keys, a CIDR over addresses)
   * and publishes them in one view before returning.
   * @returns the keys of the matched endpoints, in configuration order (empty: nothing changed).
   */
  setOverrides(select: EndpointSelector, override: OverrideRequest): string[] {
    const matched = this.publisher.currentLayout.plan.endpoints.filter((e) => matchesEndpoint(select, e)).map((e) => e.key);
    if (matched.length === 0) return matched;
    this.publisher.batch(() => {
      for (const key of matched) if (!this.overrides.request(key, override)) this.publisher.overrideChanged(key);
    });
    return matched;
  }

  /** Stops the checks and writes the state file one last time. */
  async stop(): Promise<void> {
    this.publisher.stop();
    this.runner.stop();
    this.quorum?.stop();
    await this.stateFile.stop();
  }

  /** Everything /health shows: checks, endpoints, data centers, services, the state file. */
  report(): HealthReport {
    return healthReport(this.reportInput());
  }

  /** {@link report} built in slices (`runInSlices`), for `GET /health`. */
  reportInSlices(): Promise<HealthReport> {
    return runInSlices(healthReportSteps(this.reportInput()));
  }

  private reportInput(): HealthReportInput {
    return {
      plan: this.publisher.currentLayout.plan,
      view: this.publisher.view,
      checks: this.runner.all(),
      stateFile: this.stateFile.report(),
      nowMs: this.clock.now(),
    };
  }

  /**
   * The statuses monitors cover: every data center with check points (`host.status`), and every
   * (service, data center) with a monitored or overridden endpoint (`service.status`).
   */
  coveredStatuses(): { hosts: [dc: string, status: HealthStatus][]; services: [service: string, dc: string, status: HealthStatus][] } {
    const view = this.publisher.view;
    const plan = this.publisher.currentLayout.plan;
    const covered = new Map<string, [string, string]>();
    for (const e of plan.endpoints) {
      if (e.checks.length > 0 || this.overrides.has(e.key)) covered.set(`${e.service}\u0000${e.dc}`, [e.service, e.dc]);
    }
    return {
      hosts: plan.dcs.map((d) => [d.name, view.hostStatus(d.name)]),
      services: [...covered.values()].map(([service, dc]) => [service, dc, view.serviceStatus(service, dc)]),
    };
  }

  /** The state file's content now: check states with a result, and the overrides. */
  private savedState(): SavedState {
    const state: SavedState = { version: 1, writtenAtMs: this.clock.now(), checks: {}, overrides: this.overrides.toJSON() };
    for (const c of this.runner.all()) {
      const s = c.state;
      if (s.status === 'unknown') continue;
      state.checks[c.planned.id] = { fingerprint: c.planned.fingerprint, status: s.status, sinceMs: s.sinceMs, lastSuccessMs: s.lastSuccessMs };
    }
    return state;
  }
}
