/**
 * Work done as a generator that yields between units of well under a millisecond (compiling a
 * snapshot: records, zone entries, answer-class tables), so the reload pipeline can run it in
 * slices without holding the event loop (`src/process/reloadPipeline.ts`), and everything else
 * can run it in one go.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end on the calling thread and returns its result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
