import test from 'ava';
import { waitFor } from '../../../../test/support/waitFor.js';
import { CheckDeadlines } from './checkDeadlines.js';

test('every armed check times out once, after its deadline; disarmed ones never do (200 checks: the ring grows)', async (t) => {
  const deadlines = new CheckDeadlines(5);
  const fired = new Map<number, number>();
  const start = performance.now();
  const tokens: number[] = [];
  for (let i = 0; i < 200; i++) {
    const armedAt = performance.now();
    tokens.push(deadlines.arm(40, armedAt, { timedOut: () => fired.set(i, performance.now() - armedAt) }));
  }
  for (let i = 1; i < 200; i += 2) deadlines.disarm(40, tokens[i]!);
  await waitFor('100 timeouts', () => fired.size >= 100, 5000);
  await new Promise((r) => setTimeout(r, 100));
  t.is(fired.size, 100);
  for (const [i, afterMs] of fired) {
    t.is(i % 2, 0, `check ${i} was disarmed`);
    t.true(afterMs >= 40, `check ${i} timed out after ${afterMs} ms`);
  }
  t.true(performance.now() - start < 4000);
});

test('timeouts of different lengths are kept apart and each fires in its own time', async (t) => {
  const deadlines = new CheckDeadlines(5);
  const order: string[] = [];
  const at = performance.now();
  deadlines.arm(150, at, { timedOut: () => order.push('long') });
  deadlines.arm(30, at, { timedOut: () => order.push('short') });
  const disarmed = deadlines.arm(30, at, { timedOut: () => order.push('disarmed') });
  deadlines.disarm(30, disarmed);
  await waitFor('both timeouts', () => order.length === 2, 5000);
  t.deepEqual(order, ['short', 'long']);
  t.true(performance.now() - at >= 150);
});

test('a check armed after the timer was set for a later deadline moves the timer earlier', async (t) => {
  const deadlines = new CheckDeadlines(5);
  const at = performance.now();
  let long = -1;
  let short = -1;
  deadlines.arm(1000, at, { timedOut: () => (long = performance.now() - at) });
  deadlines.arm(20, at, { timedOut: () => (short = performance.now() - at) });
  await waitFor('the short timeout', () => short >= 0, 5000);
  t.true(short >= 20 && short < 900, `short timeout after ${short} ms`);
  t.is(long, -1);
});
