/** Time and timers, injected so tests can drive the scheduler. */
export interface SchedulerClock {
  /** ms since the epoch (wall clock: timestamps of results, the state file). */
  now(): number;
  /**
   * ms on a clock that never steps (due times, throttles): a wall clock set back by an hour must
   * not stop every check for that hour.
   */
  monotonic(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** Runs `fn` on the next event-loop turn, after the I/O already waiting (Node: `setImmediate`). */
  defer(fn: () => void): void;
}

/**
 * Node's clock: `Date.now`, `performance.now` as the monotonic clock, an unref'd `setTimeout`
 * (health checks never keep a process alive) and `setImmediate`.
 */
export const systemSchedulerClock: SchedulerClock = {
  now: Date.now,
  monotonic: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimer: (h) => clearTimeout(h as NodeJS.Timeout),
  defer: (fn) => void setImmediate(fn),
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
  readonly job: ScheduledJob;
  cancelled: boolean;
}

/**
 * Runs many periodic jobs from one timer over a binary min-heap of due times, so 10,000 checks
 * cost one armed timer, not 10,000. The timer fires on tick boundaries and runs every job due by
 * then, so 2,000 checks/s cost at most 1000 / tick wake-ups per second instead of one each. The
 * tick is 1 % of the shortest interval among the jobs scheduled, between 1 ms and `maxTickMs`
 * (50 ms by default: a 5 s interval), so a job starts up to 1 % of its interval late (the lag is
 * reported); against a jitter of ±10 % of the interval that is noise, while each wake-up starts
 * a larger batch of checks, whose system calls then share the event loop's `epoll_wait` turns
 * (2,000 HTTP checks/s: 76–79 µs of CPU per check at 50 ms ticks against 86–90 µs at 10 ms;
 * docs/BENCHMARKS-HISTORY.md, health: investigations). The jobs of one tick start in batches of at most `maxBatch`, one
 * batch per event-loop turn, so the I/O waiting meanwhile (DNS queries, check answers) is served
 * between batches: a tick's checks never hold the event loop for more than one batch (≈ 16 new
 * connections, well under a millisecond), however many fall due together. A new job first runs
 * at a uniformly random point of its first interval (so jobs added together spread out);
 * afterwards every `interval × (1 + u × jitter)`, u uniform in [−1, 1], counted from its previous
 * due time, so checks neither align nor drift together. A job whose next due time has already
 * passed (the process stalled) is rescheduled from now instead of running repeatedly to catch up.
 */
export class JitteredScheduler {
  /**
   * The heap: due times (ms) in a typed array beside their entries, so sifting compares
   * contiguous numbers instead of loading an object per comparison (10,000 entries do not stay
   * in the caches between ticks).
   */
  private heapDue = new Float64Array(1024);
  private heapEntry: Entry[] = [];
  private count = 0;
  private readonly entries = new Map<ScheduledJob, Entry>();
  private timer: unknown;
  private timerDue = Infinity;
  private stopped = false;
  /** The timer's granularity (ms): 1 % of the shortest interval scheduled, within [1, maxTickMs]. */
  private tickMs: number;
  /** A job was removed: the tick may grow, recomputed at the next arming (once per batch of removals). */
  private tickStale = false;
  /**
   * A tick's jobs are being started, in this turn or deferred ones: jobs added meanwhile arm no
   * timer (the last batch arms the next one).
   */
  private firing = false;

  /**
   * @param maxTickMs the coarsest tick (ms), used when every interval is at least 100 × it; 1
   *   runs every job at its own millisecond
   * @param maxBatch most jobs started in one event-loop turn
   */
  constructor(
    private readonly clock: SchedulerClock = systemSchedulerClock,
    private readonly random: () => number = Math.random,
    private readonly maxTickMs = 50,
    private readonly maxBatch = 16,
  ) {
    this.tickMs = maxTickMs;
  }

  /** Adds a job; its first run falls in [now, now + interval). */
  add(job: ScheduledJob): void {
    if (this.entries.has(job)) return;
    this.tickMs = Math.min(this.tickMs, tickFor(job.intervalMs, this.maxTickMs));
    const e: Entry = { job, cancelled: false };
    this.entries.set(job, e);
    this.push(e, this.clock.monotonic() + this.random() * job.intervalMs);
    this.arm();
  }

  /** Removes a job; a run in progress is not interrupted. */
  remove(job: ScheduledJob): void {
    const e = this.entries.get(job);
    if (!e) return;
    e.cancelled = true;
    this.entries.delete(job);
    this.tickStale = true;
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
    this.heapEntry = [];
    this.count = 0;
    this.entries.clear();
  }

  /** Runs the jobs due by `at` (the tick the timer was armed for; timers may fire a little early). */
  private fire(at: number): void {
    this.timer = undefined;
    this.timerDue = Infinity;
    this.firing = true;
    const now = Math.max(this.clock.monotonic(), at);
    let started = 0;
    while (this.count > 0 && this.heapDue[0]! <= now) {
      const e = this.heapEntry[0]!;
      if (e.cancelled) {
        this.popTop();
        continue;
      }
      if (started === this.maxBatch) {
        this.clock.defer(() => this.fire(at));
        return;
      }
      started++;
      const { job } = e;
      const due = this.heapDue[0]!;
      const step = job.intervalMs * (1 + (this.random() * 2 - 1) * job.jitter);
      this.heapDue[0] = due + step < now ? now + step : due + step;
      this.siftDown(0);
      job.run(now - due);
      if (this.stopped) return;
    }
    this.firing = false;
    this.arm();
  }

  private arm(): void {
    if (this.stopped || this.firing) return;
    while (this.count > 0 && this.heapEntry[0]!.cancelled) this.popTop();
    if (this.count === 0) return;
    if (this.tickStale) {
      this.tickStale = false;
      this.tickMs = this.maxTickMs;
      for (const job of this.entries.keys()) this.tickMs = Math.min(this.tickMs, tickFor(job.intervalMs, this.maxTickMs));
    }
    const at = Math.ceil(this.heapDue[0]! / this.tickMs) * this.tickMs;
    if (at >= this.timerDue) return;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timerDue = at;
    this.timer = this.clock.setTimer(() => this.fire(at), Math.max(0, at - this.clock.monotonic()));
  }

  private push(e: Entry, due: number): void {
    if (this.count === this.heapDue.length) {
      const bigger = new Float64Array(this.count * 2);
      bigger.set(this.heapDue);
      this.heapDue = bigger;
    }
    const hd = this.heapDue;
    const he = this.heapEntry;
    let i = this.count++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (hd[p]! <= due) break;
      hd[i] = hd[p]!;
      he[i] = he[p]!;
      i = p;
    }
    hd[i] = due;
    he[i] = e;
  }

  /** Removes the head (a cancelled job). */
  private popTop(): void {
    const last = --this.count;
    if (last > 0) {
      this.heapDue[0] = this.heapDue[last]!;
      this.heapEntry[0] = this.heapEntry[last]!;
    }
    this.heapEntry.length = last;
    if (last > 0) this.siftDown(0);
  }

  /** Moves the entry at `i` down to its place after its due time grew. */
  private siftDown(i: number): void {
    const hd = this.heapDue;
    const he = this.heapEntry;
    const due = hd[i]!;
    const e = he[i]!;
    const n = this.count;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && hd[r]! < hd[l]! ? r : l;
      if (hd[c]! >= due) break;
      hd[i] = hd[c]!;
      he[i] = he[c]!;
      i = c;
    }
    hd[i] = due;
    he[i] = e;
  }
}

/** 1 % of `intervalMs`, within [1, maxTickMs] (ms). */
function tickFor(intervalMs: number, maxTickMs: number): number {
  return Math.min(maxTickMs, Math.max(1, Math.floor(intervalMs / 100)));
}
