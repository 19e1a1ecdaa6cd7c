/**
 * Waiting for a condition in tests: poll with a deadline instead of sleeping for a guessed time,
 * so a loaded machine makes a test slower, never wrong, and a condition that never comes fails
 * with a message instead of hanging the worker.
 */

/**
 * Polls `condition` every `everyMs` until it returns true or `limitMs` passes; returns the time it
 * took (ms). An error thrown by `condition` (e.g. "the process exited") ends the wait at once.
 * @throws Error naming `what`, and `detail()` when given, when the limit passes.
 */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  limitMs: number,
  options: { everyMs?: number; detail?: () => string } = {},
): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await condition()) return Date.now() - started;
    if (Date.now() - started > limitMs) {
      const detail = options.detail?.();
      throw new Error(`timed out after ${limitMs} ms waiting for ${what}${detail ? `\n${detail}` : ''}`);
    }
    await sleep(options.everyMs ?? 20);
  }
}

/** Resolves after `ms`: for spacing events a test sends, not for waiting on the code under test. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
