import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc()` as `--expose-gc` defines it; `{ type: 'minor' }` asks for a scavenge only. */
type GcFunction = (options: { type: 'minor' | 'major' }) => void;

let gc: GcFunction | null | undefined;

/**
 * V8's `gc` function: the global one when the process runs with `--expose-gc`, otherwise one
 * taken from a fresh context with the flag set for that moment only (the way Jest's leak
 * detector reaches it), so no global `gc` appears. `null` when V8 refuses.
 */
function gcFunction(): GcFunction | null {
  if (gc !== undefined) return gc;
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return (gc = exposed as GcFunction);
  try {
    setFlagsFromString('--expose-gc');
    const taken: unknown = runInNewContext('gc');
    gc = typeof taken === 'function' ? (taken as GcFunction) : null;
  } catch {
    gc = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return gc;
}

/**
 * Scavenges V8's young generation now (a minor GC), so the objects a sliced compile allocated
 * since the last call are copied while they are few.
 *
 * Why: a scavenge copies every young object that survives it, and a snapshot being compiled is
 * mostly new objects that survive. Left to V8, a scavenge comes when the 16 MiB semi-space of
 * `--min-semi-space-size=16` (the engine's flag, README) is full, and copying it held the event
 * loop 33–75 ms during a 20,000-record reload under load (issue 17; the reload row of
 * docs/BENCHMARKS.md). One scavenge per slice copies one slice's objects: 1–3 ms. The flag stays,
 * since a small young generation costs the query path 2–4 µs per query in scavenges
 * (`src/doors/powerdns/README.md`).
 *
 * Does nothing when V8 gives no `gc` function.
 */
export function collectYoungGeneration(): void {
  gcFunction()?.({ type: 'minor' });
}
