import test from 'ava';
import { performance } from 'node:perf_hooks';
import { forcedScavenges } from '../../../test/support/forcedScavenges.js';
import { runInSlices, type Steps } from './steps.js';
import { collectYoungGeneration } from './youngGeneration.js';

/** `count` steps of `busyMs` each that keep what they allocate: with a slice of 1 ms, every step is a slice. */
function* keepingSteps(count: number, busyMs: number, kept: unknown[]): Steps<number> {
  for (let i = 0; i < count; i++) {
    const until = performance.now() + busyMs;
    while (performance.now() < until) kept.push({ i, name: `record-${kept.length}` });
    yield;
  }
  return count;
}

// Serial: each test counts every forced scavenge of the process while it runs.
test.serial('collectYoungGeneration runs one scavenge without --expose-gc and leaves no global gc', async (t) => {
  t.is(await forcedScavenges(async () => collectYoungGeneration()), 1);
  t.is((globalThis as { gc?: unknown }).gc, undefined);
});

test.serial('runInSlices with collectYoung scavenges once after each of the slices the steps end in', async (t) => {
  const kept: unknown[] = [];
  t.is(await forcedScavenges(() => runInSlices(keepingSteps(10, 2, kept), 1, { collectYoung: true })), 10);
  t.true(kept.length > 0);
});

test.serial('runInSlices leaves the young generation to V8 by default', async (t) => {
  t.is(await forcedScavenges(() => runInSlices(keepingSteps(10, 2, []), 1)), 0);
});
