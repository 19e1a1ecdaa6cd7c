import type { StateMap } from '../../core/contracts/stateStore.js';
import { UNMONITORED_UP, type AdminOverride, type EndpointHealth, type HealthStatus } from '../../core/views/healthView.js';
import { combineStatus, groupStatus } from './checkState.js';
import type { HealthMetrics } from './healthMetrics.js';
import { EMPTY_LAYOUT, type HealthLayout } from './healthLayout.js';
import type { CheckObservation } from './healthStore.js';
import { MonitoredHealthView } from './monitoredHealthView.js';
import type { SchedulerClock } from './scheduler.js';

/** What a {@link ViewPublisher} needs. */
export interface ViewPublisherOptions {
  readonly clock: SchedulerClock;
  /** The check verdicts it watches (written by the check runner). */
  readonly observations: StateMap<CheckObservation>;
  /** The overrides it watches. */
  readonly overrides: StateMap<AdminOverride>;
  readonly metrics: HealthMetrics | undefined;
  /** Shortest time (ms) between two views published for check changes. */
  readonly minPublishIntervalMs: number;
  /** Called after each published view (the state file is written after changes). */
  readonly published: () => void;
}

/**
 * Builds the immutable health views from what it watches in the state store — check verdicts and
 * overrides — and publishes them to its listeners: a check change at most every
 * `minPublishIntervalMs` (changes in between are published together), an override at once,
 * before the write that made it returns. Each view is built incrementally from the changed
 * checks and copies two arrays (src/capabilities/health/README.md, "The query path never waits
 * for health").
 */
export class ViewPublisher {
  private layout: HealthLayout = EMPTY_LAYOUT;
  private readonly listeners: ((view: MonitoredHealthView) => void)[] = [];
  /** The state being built (mutable); each view gets copies of the arrays. */
  private endpointHealth: EndpointHealth[] = [];
  private serviceStatus: HealthStatus[] = [];
  private hostStatus = new Map<string, HealthStatus>();
  private readonly dirtyChecks = new Set<string>();
  private current: MonitoredHealthView = this.snapshotView();
  private running = false;
  /** While a configuration is adopted its store writes are part of it, not changes to publish. */
  private adopting = false;
  private publishTimer: unknown;
  /** Inside {@link batch}: the endpoint keys whose override changed, published together at its end. */
  private batched: Set<string> | undefined;
  private lastPublishMs = -Infinity;

  constructor(private readonly opts: ViewPublisherOptions) {
    opts.observations.watch((id) => this.checkChanged(id));
    opts.overrides.watch((key) => this.overrideChanged(key));
  }

  /** The view published last (or built by the last {@link adopt}). */
  get view(): MonitoredHealthView {
    return this.current;
  }

  /** The layout of the current configuration. */
  get currentLayout(): HealthLayout {
    return this.layout;
  }

  /** Calls `fn` with each view published after a change. */
  onChange(fn: (view: MonitoredHealthView) => void): void {
    this.listeners.push(fn);
  }

  /**
   * Adopts a configuration's layout: runs `change` (its store writes are not published one by
   * one), then rebuilds every endpoint, service and data center from the store. Returns the new
   * view; listeners are not called.
   */
  adopt(layout: HealthLayout, change: () => void): MonitoredHealthView {
    this.adopting = true;
    try {
      change();
    } finally {
      this.adopting = false;
    }
    const plan = layout.plan;
    this.layout = layout;
    this.endpointHealth = plan.endpoints.map((_, i) => this.endpointHealthAt(i));
    this.serviceStatus = layout.serviceEndpoints.map((_, slot) => this.serviceStatusAt(slot));
    this.hostStatus = new Map(plan.dcs.map((_, d) => [plan.dcs[d]!.name, this.hostStatusAt(d)]));
    this.dirtyChecks.clear();
    this.current = this.snapshotView();
    return this.current;
  }

  /** Publishes check changes from now on. */
  start(): void {
    this.running = true;
  }

  /** Publishes no more check changes (overrides still publish). */
  stop(): void {
    this.running = false;
    if (this.publishTimer !== undefined) this.opts.clock.clearTimer(this.publishTimer);
    this.publishTimer = undefined;
  }

  /**
   * Publishes the change of an endpoint's override at once. Also called for a request that
   * changed nothing in the store (clearing an absent override), which publishes as any request does.
   */
  overrideChanged(key: string): void {
    if (this.adopting) return;
    if (this.batched) {
      this.batched.add(key);
      return;
    }
    if (this.applyOverride(key)) this.publish();
  }

  /**
   * Runs `change` (override writes) and publishes the overrides it changed in one view at its
   * end, so a data center drained endpoint by endpoint leaves the answers in one publish.
   */
  batch(change: () => void): void {
    const keys = (this.batched = new Set<string>());
    try {
      change();
    } finally {
      this.batched = undefined;
    }
    let any = false;
    for (const key of keys) any = this.applyOverride(key) || any;
    if (any) this.publish();
  }

  /** Recomputes the endpoint of `key` and its service slot; false for a key not in the layout. */
  private applyOverride(key: string): boolean {
    const i = this.layout.index.endpoints.get(key);
    if (i === undefined) return false;
    this.endpointHealth[i] = this.endpointHealthAt(i);
    const slot = this.layout.endpointService[i]!;
    this.serviceStatus[slot] = this.serviceStatusAt(slot);
    return true;
  }

  private checkChanged(id: string): void {
    if (this.adopting) return;
    this.dirtyChecks.add(id);
    this.queuePublish();
  }

  /** Publishes soon: at once when the last view is older than the minimum interval, else when it is. */
  private queuePublish(): void {
    if (this.publishTimer !== undefined) return;
    const clock = this.opts.clock;
    const wait = Math.max(0, this.lastPublishMs + this.opts.minPublishIntervalMs - clock.monotonic());
    this.publishTimer = clock.setTimer(() => {
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
        if (before.status !== after.status) this.opts.metrics?.transitions.inc({ endpoint: plan.endpoints[i]!.key, to: after.status });
        services.add(endpointService[i]!);
      }
      for (const d of checkDcs.get(id) ?? []) this.hostStatus.set(plan.dcs[d]!.name, this.hostStatusAt(d));
    }
    this.dirtyChecks.clear();
    for (const slot of services) this.serviceStatus[slot] = this.serviceStatusAt(slot);
    this.lastPublishMs = this.opts.clock.monotonic();
    this.current = this.snapshotView();
    for (const fn of this.listeners) fn(this.current);
    this.opts.published();
  }

  /** A view over copies of the current arrays. */
  private snapshotView(): MonitoredHealthView {
    return new MonitoredHealthView(this.layout.index, this.endpointHealth.slice(), this.serviceStatus.slice(), new Map(this.hostStatus));
  }

  /** The status of a check as last observed; unknown when it has none. */
  private checkStatus(id: string): HealthStatus {
    return this.opts.observations.get(id)?.status ?? 'unknown';
  }

  /** The health of the endpoint at position `i` from its checks and override. */
  private endpointHealthAt(i: number): EndpointHealth {
    const e = this.layout.plan.endpoints[i]!;
    const override = this.opts.overrides.get(e.key);
    if (e.checks.length === 0) return override ? { status: 'up', override, sinceMs: 0 } : UNMONITORED_UP;
    let status: HealthStatus = 'up';
    for (const id of e.checks) {
      const s = this.checkStatus(id);
      if (s === 'down') status = 'down';
      else if (s === 'unknown' && status === 'up') status = 'unknown';
    }
    let sinceMs = 0;
    for (const id of e.checks) {
      const seen = this.opts.observations.get(id);
      if (seen && seen.status === status && seen.sinceMs > sinceMs) sinceMs = seen.sinceMs;
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
    const statusOf = (id: string): HealthStatus => this.checkStatus(id);
    const groups: HealthStatus[] = [];
    for (const g of [dc.wan, dc.lan]) {
      const s = groupStatus(dc.rule, g.map(statusOf));
      if (s) groups.push(s);
    }
    return combineStatus(groups);
  }
}
