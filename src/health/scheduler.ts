/** Time and timers, injected so tests can drive the scheduler. */
export interface SchedulerClock {
  /** ms since the epoch. */
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

/** Node's clock: `Date.now` and an unref'd `setTimeout` (health checks never keep a process alive). */
export const systemSchedulerClock: SchedulerClock = {
  now: Date.now,
  setTimer: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** A periodic job. */
export interface ScheduledJob {
  readonly intervalMs: number;
  /** Fraction of the interval by which each period is stretched or shrunk at random (0–0.5). */
  readonly jitter: number;
  /** Runs the job; `lagMs` is how late it starts against its due time. */
  run(lagMs: number): void;
}

interface Entry {
  due: number;
  readonly job: ScheduledJob;
  cancelled: boolean;
}

/**
 * Runs many periodic jobs from one timer over a binary min-heap of due times, so 10,000 checks
 * cost one armed timer, not 10,000. A new job first runs at a uniformly random point of its first
 * interval (so jobs added together spread out); afterwards every `interval × (1 + u × jitter)`,
 * u uniform in [−1, 1], counted from its previous due time, so checks neither align nor drift
 * together. A job whose next due time has already passed (the process stalled) is rescheduled
 * from now instead of running repeatedly to catch up.
 */
export class JitteredScheduler {
  private heap: Entry[] = [];
  private readonly entries = new Map<ScheduledJob, Entry>();
  private timer: unknown;
  private timerDue = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: SchedulerClock = systemSchedulerClock,
    private readonly random: () => number = Math.random,
  ) {}

  /** Adds a job; its first run falls in [now, now + interval). */
  add(job: ScheduledJob): void {
    if (this.entries.has(job)) return;
    const e: Entry = { due: this.clock.now() + this.random() * job.intervalMs, job, cancelled: false };
    this.entries.set(job, e);
    this.push(e);
    this.arm();
  }

  /** Removes a job; a run in progress is not interrupted. */
  remove(job: ScheduledJob): void {
    const e = this.entries.get(job);
    if (!e) return;
    e.cancelled = true;
    this.entries.delete(job);
  }

  /** Number of jobs scheduled. */
  get size(): number {
    return this.entries.size;
  }

  /** Stops every job and the timer. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.heap = [];
    this.entries.clear();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    const now = this.clock.now();
    while (this.heap.length > 0 && this.heap[0]!.due <= now) {
      const e = this.pop()!;
      if (e.cancelled) continue;
      const { job } = e;
      const lag = now - e.due;
      const step = job.intervalMs * (1 + (this.random() * 2 - 1) * job.jitter);
      e.due = e.due + step < now ? now + step : e.due + step;
      this.push(e);
      job.run(lag);
      if (this.stopped) return;
    }
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
    const head = this.heap[0];
    if (!head || head.due >= this.timerDue) return;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timerDue = head.due;
    this.timer = this.clock.setTimer(() => this.fire(), Math.max(0, head.due - this.clock.now()));
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.due <= e.due) break;
      h[i] = h[p]!;
      i = p;
    }
    h[i] = e;
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const r = l + 1;
        const c = r < h.length && h[r]!.due < h[l]!.due ? r : l;
        if (h[c]!.due >= last.due) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}
