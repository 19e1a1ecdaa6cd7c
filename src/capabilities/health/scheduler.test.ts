import test from 'ava';
import { JitteredScheduler, type ScheduledJob, type SchedulerClock } from './scheduler.js';

/** A manual clock: timers fire when `advance` passes their time. */
class ManualClock implements SchedulerClock {
  t = 1_000_000;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  /** Timers armed so far. */
  armedCount = 0;
  /** How far the wall clock has been set away from the monotonic one (ms). */
  wallStep = 0;
  now = (): number => this.t + this.wallStep;
  monotonic = (): number => this.t;
  setTimer = (fn: () => void, ms: number): unknown => {
    const id = this.next++;
    this.armedCount++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimer = (h: unknown): void => {
    this.timers.delete(h as number);
  };
  /** Deferred functions run in the same millisecond step, after its timers (Node: the same event-loop turn). */
  private deferredFns: (() => void)[] = [];
  /** Functions deferred so far. */
  deferCount = 0;
  defer = (fn: () => void): void => {
    this.deferCount++;
    this.deferredFns.push(fn);
  };
  /** Advances time in 1 ms steps, firing due timers. */
  advance(ms: number): void {
    const end = this.t + ms;
    while (this.t < end) {
      this.t++;
      for (const [id, timer] of [...this.timers]) {
        if (timer.at <= this.t) {
          this.timers.delete(id);
          timer.fn();
        }
      }
      while (this.deferredFns.length > 0) this.deferredFns.shift()!();
    }
  }
  get armed(): number {
    return this.timers.size;
  }
}

/** Deterministic uniform numbers (a linear congruential generator with a fixed seed). */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

function job(intervalMs: number, jitter: number, runs: number[], clock: ManualClock, lags?: number[]): ScheduledJob {
  return {
    intervalMs,
    jitter,
    run(lag) {
      runs.push(clock.t);
      lags?.push(lag);
    },
  };
}

test('a new job first runs inside its first interval, then every interval within the jitter bounds', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, seeded(7), 1);
  const runs: number[] = [];
  const start = clock.t;
  s.add(job(100, 0.1, runs, clock));
  clock.advance(2000);
  t.true(runs[0]! - start < 100 + 1, `first run after ${runs[0]! - start} ms`);
  const gaps = runs.slice(1).map((r, i) => r - runs[i]!);
  t.true(gaps.length >= 17 && gaps.length <= 22, `${gaps.length} runs in 2 s`);
  for (const g of gaps) t.true(g >= 90 - 1 && g <= 110 + 1, `gap ${g} ms`);
  t.true(new Set(gaps).size > 3, 'the gaps vary (jitter)');
});

test('many jobs added at once spread over the interval instead of aligning, from one timer', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, seeded(11), 1);
  const firstRuns: number[][] = [];
  for (let i = 0; i < 200; i++) {
    const runs: number[] = [];
    firstRuns.push(runs);
    s.add(job(1000, 0.1, runs, clock));
  }
  t.is(clock.armed, 1, 'one timer for all jobs');
  clock.advance(1000);
  t.true(firstRuns.every((r) => r.length >= 1));
  const runs = firstRuns.map((r) => r[0]!);
  const buckets = new Array(10).fill(0);
  for (const r of runs) buckets[Math.min(9, Math.floor((r - 1_000_000) / 100))]++;
  for (const b of buckets) t.true(b >= 8 && b <= 35, `per-100-ms counts ${buckets.join(',')}`);
  t.is(clock.armed, 1);
});

test('a removed job stops; lag reports lateness against the due time; stop ends everything', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, () => 0.5, 1);
  const a: number[] = [];
  const b: number[] = [];
  const lags: number[] = [];
  const ja = job(100, 0, a, clock, lags);
  s.add(ja);
  s.add(job(100, 0, b, clock));
  clock.advance(300);
  t.deepEqual(
    a.map((x) => x - 1_000_000),
    [50, 150, 250],
  );
  t.deepEqual(lags, [0, 0, 0]);
  s.remove(ja);
  clock.advance(300);
  t.is(a.length, 3);
  t.is(b.length, 6);
  t.is(s.size, 1);
  s.stop();
  clock.advance(300);
  t.is(b.length, 6);
  t.is(clock.armed, 0);
});

test('a stalled process catches up with one run per job, not a burst', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, () => 0, 1);
  const runs: number[] = [];
  const lags: number[] = [];
  s.add(job(100, 0, runs, clock, lags));
  clock.advance(1);
  t.is(runs.length, 1);
  // The event loop is blocked for 1 s: the timer fires late, once.
  clock.t += 1000;
  clock.advance(1);
  t.is(runs.length, 2);
  t.true(lags[1]! >= 900, `lag ${lags[1]}`);
  clock.advance(99);
  t.is(runs.length, 2);
  clock.advance(2);
  t.is(runs.length, 3);
});

test('with a 10 ms tick, jobs due within one tick run together: at most one wake-up per tick, lag under a tick', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, seeded(3), 10);
  const lags: number[] = [];
  const runs: number[] = [];
  for (let i = 0; i < 2000; i++) s.add(job(1000, 0.1, runs, clock, lags));
  const armedBefore = clock.armedCount;
  clock.advance(3000);
  t.true(runs.length >= 5400 && runs.length <= 6600, `${runs.length} runs`);
  t.true(clock.armedCount - armedBefore <= 301, `${clock.armedCount - armedBefore} wake-ups for ${runs.length} runs`);
  t.true(
    lags.every((l) => l >= 0 && l < 10),
    `max lag ${Math.max(...lags)}`,
  );
  t.true(
    runs.every((r) => r % 10 === 0),
    'runs fall on tick boundaries',
  );
});

test('the default tick is 1 % of the shortest interval scheduled, at most 50 ms, and grows back when the short job is removed', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, seeded(5));
  const slow: number[] = [];
  const slowLags: number[] = [];
  for (let i = 0; i < 200; i++) s.add(job(5000, 0.1, slow, clock, slowLags));
  clock.advance(10_000);
  t.true(slow.length >= 360 && slow.length <= 440, `${slow.length} runs`);
  t.true(
    slow.every((r) => r % 50 === 0),
    '5 s intervals: runs on 50 ms ticks',
  );
  t.true(
    slowLags.every((l) => l >= 0 && l < 50),
    `max lag ${Math.max(...slowLags)}`,
  );
  t.true(
    slowLags.some((l) => l >= 10),
    'lags use the whole tick',
  );

  const fast: number[] = [];
  const fastJob = job(300, 0, fast, clock);
  s.add(fastJob);
  slow.length = 0;
  clock.advance(3000);
  t.true(fast.length >= 9 && fast.length <= 11, `${fast.length} runs of the 300 ms job`);
  t.true(
    slow.every((r) => r % 3 === 0),
    'a 300 ms interval: 3 ms ticks for every job',
  );
  t.true(
    slow.some((r) => r % 50 !== 0),
    'the 5 s jobs no longer wait for 50 ms boundaries',
  );

  s.remove(fastJob);
  clock.advance(100);
  slow.length = 0;
  clock.advance(5000);
  t.true(slow.length > 100, `${slow.length} runs`);
  t.true(
    slow.every((r) => r % 50 === 0),
    'back to 50 ms ticks once the short job is gone',
  );
});

test('the jobs of one tick start at most maxBatch per event-loop turn; the rest follow on the next turns, not on a timer', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, seeded(9), 10, 3);
  const perTurn = new Map<string, number>();
  const armedDuringRuns: number[] = [];
  let runs = 0;
  let added = false;
  const firstTurnOf = new Map<number, number>();
  const batchJob = (): ScheduledJob => ({
    intervalMs: 1000,
    jitter: 0.1,
    run(lag) {
      runs++;
      const turn = `${clock.t}/${clock.deferCount}`;
      perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
      armedDuringRuns.push(clock.armed);
      t.true(lag >= 0 && lag < 10, `lag ${lag}`);
      if (!firstTurnOf.has(clock.t)) firstTurnOf.set(clock.t, clock.deferCount);
      // A job added while a tick's later batches run must not arm a timer of its own.
      if (!added && clock.deferCount > firstTurnOf.get(clock.t)!) {
        added = true;
        s.add(batchJob());
      }
    },
  });
  for (let i = 0; i < 2000; i++) s.add(batchJob());
  clock.advance(3000);
  t.true(runs >= 5400 && runs <= 6600, `${runs} runs`);
  t.is(Math.max(...perTurn.values()), 3);
  t.true(clock.deferCount > 1000, `${clock.deferCount} deferred batches`);
  t.true(added);
  t.true(
    armedDuringRuns.every((n) => n === 0),
    'no timer is armed while a tick is being worked through',
  );
  t.is(clock.armed, 1, 'one timer armed for the next tick afterwards');
});

test('a wall clock set back or forward does not stop or bunch the jobs: due times follow the monotonic clock', (t) => {
  const clock = new ManualClock();
  const s = new JitteredScheduler(clock, seeded(4), 10);
  const runs: number[] = [];
  s.add(job(100, 0, runs, clock));
  clock.advance(1000);
  const before = runs.length;
  clock.wallStep = -3_600_000;
  clock.advance(1000);
  t.true(runs.length - before >= 9 && runs.length - before <= 11, `${runs.length - before} runs in the second after the wall clock went back an hour`);
  clock.wallStep = 3_600_000;
  const middle = runs.length;
  clock.advance(1000);
  t.true(runs.length - middle >= 9 && runs.length - middle <= 11, `${runs.length - middle} runs in the second after it went forward an hour`);
});
