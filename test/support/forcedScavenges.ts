import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Counts the minor GCs that were asked for (`gc({ type: 'minor' })`, flagged forced), not started
 * by V8, while `run` ran. Forced collections of other code running at the same time count too:
 * callers that assert an exact count run serially.
 */
export async function forcedScavenges(run: () => Promise<unknown>): Promise<number> {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  await run();
  // GC entries reach observers after the collection, in a later turn.
  await sleep(20);
  observer.disconnect();
  return entries.filter((e) => {
    const { kind, flags } = (e as PerformanceEntry & { detail: { kind: number; flags: number } }).detail;
    return kind === constants.NODE_PERFORMANCE_GC_MINOR && (flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0;
  }).length;
}
