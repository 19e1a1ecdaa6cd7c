import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectYoungGeneration } from './youngGeneration.js';

/**
 * Work done as a generator that yields between units of well under a millisecond (compiling a
 * snapshot: records, zone entries, answer-class tables), so the reload pipeline can run it in
 * slices without holding the event loop (`src/process/reloadPipeline.ts`), and everything else
 * can run it in one go.
 */
export type Steps<T> = Generator<void, T, void>;

/** Default length of one slice of {@link runInSlices} (ms): well below the 50 ms the event loop may be held (issue 17). */
export const SLICE_MS = 4;

/** Runs `steps` to the end on the calling thread and returns its result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * Active event-loop time (ms) during a pause between slices from which other work is taken to be
 * waiting for the event loop, and the next pause is {@link BUSY_PAUSE_SLICES} slices long. An
 * idle pause measured 0.09 ms (median, Node 20); PowerDNS's lock-step lookups at 2,000 queries/s
 * fill about a millisecond of each 4 ms pause.
 */
export const BUSY_PAUSE_MS = 0.25;

/**
 * Length of a pause after a busy one, in slices: while other work waits, the slices take at most
 * a third of the engine thread's time.
 *
 * Why not half (a pause as long as a slice, as before): on a machine whose cores other processes
 * share (two cores, three dnsperf, PowerDNS, CoreDNS: the reload row of docs/BENCHMARKS.md), a
 * thread that keeps using more than its share of a core is the one the Linux scheduler makes wait
 * when it wakes (EEVDF runs first the tasks that have received less than their share). At half,
 * a stall detector in the engine (`/proc/thread-self/schedstat` at each 1 ms tick) saw 10–13
 * event-loop stalls over 25 ms in the three reloads of a series, the engine thread waiting for a
 * CPU 15–33 ms in each; at a third, 2–5 (issue 17). The reload takes longer: 3.4–5.7 s from the
 * SIGHUP against 3.0–4.1 s.
 */
export const BUSY_PAUSE_SLICES = 2;

/** Options of {@link runInSlices}. */
export interface SliceOptions {
  /**
   * Scavenge the young generation after each slice ({@link collectYoungGeneration}): for steps
   * whose allocations outlive them, as a snapshot's do. Default false.
   */
  readonly collectYoung?: boolean;
}

/**
 * Runs `steps` to the end in slices of about `sliceMs` milliseconds and returns the steps' result.
 * A slice ends after the step that crosses `sliceMs`, so one step is the longest the event loop
 * is held. Between two slices the event loop is left alone for at least a timer's turn (1 ms),
 * and for {@link BUSY_PAUSE_SLICES} × `sliceMs` after a pause in which other work ran for
 * {@link BUSY_PAUSE_MS} or more (`performance.eventLoopUtilization`): at most a third of a busy
 * event loop goes to the slices.
 *
 * Why not one turn (`setImmediate`): a peer that keeps one request outstanding per connection —
 * PowerDNS's remote backend, one connection per distributor thread — gets one request answered
 * per connection per turn, the next one arriving while the following slice runs. With 6
 * connections and 4 ms slices that is 1,500 lookups/s against the 6,000 of 2,000 queries/s, and
 * PowerDNS's queries waited over a second during a 20,000-record reload (issue 17; the reload row
 * of docs/BENCHMARKS.md).
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs = SLICE_MS, options: SliceOptions = {}): Promise<T> {
  let pauseMs = 1;
  for (;;) {
    const until = performance.now() + sliceMs;
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      if (performance.now() >= until) break;
    }
    if (options.collectYoung) collectYoungGeneration();
    const before = performance.eventLoopUtilization();
    await sleep(pauseMs);
    const pause = performance.eventLoopUtilization(performance.eventLoopUtilization(), before);
    pauseMs = pause.active >= BUSY_PAUSE_MS ? Math.max(1, BUSY_PAUSE_SLICES * sliceMs) : 1;
  }
}
