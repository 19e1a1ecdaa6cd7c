import { setImmediate as nextTurn } from 'node:timers/promises';

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
 * Runs `steps` to the end in slices of about `sliceMs` milliseconds, giving the event loop a turn
 * (`setImmediate`) between slices; the result is the steps' result. A slice ends after the step
 * that crosses `sliceMs`, so one step is the longest the event loop is held.
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  for (;;) {
    const until = performance.now() + sliceMs;
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      if (performance.now() >= until) break;
    }
    await nextTurn();
  }
}
