import test from 'ava';
import { applyResult, combineStatus, groupStatus, unknownCheckState } from './checkState.js';

/** Feeds results 1 s apart from t = 1000 and returns the status after each. */
function run(results: boolean[], rise: number, fall: number): string[] {
  const s = unknownCheckState(0);
  return results.map((ok, i) => {
    applyResult(s, ok, 1000 * (i + 1), rise, fall, ok ? '' : 'ECONNREFUSED');
    return s.status;
  });
}

test('unknown is left at the first result, either way', (t) => {
  t.deepEqual(run([true], 3, 3), ['up']);
  t.deepEqual(run([false], 3, 3), ['down']);
});

test('up goes down after exactly fall consecutive failures; a success resets the streak', (t) => {
  t.deepEqual(run([true, false, false, false], 2, 3), ['up', 'up', 'up', 'down']);
  t.deepEqual(run([true, false, false, true, false, false, false], 2, 3), ['up', 'up', 'up', 'up', 'up', 'up', 'down']);
});

test('down goes up after exactly rise consecutive successes; a failure resets the streak', (t) => {
  t.deepEqual(run([false, true, true], 2, 3), ['down', 'down', 'up']);
  t.deepEqual(run([false, true, false, true, true], 2, 3), ['down', 'down', 'down', 'down', 'up']);
  t.deepEqual(run([false, true], 1, 1), ['down', 'up']);
});

test('a check alternating every probe never flaps with rise = fall = 2', (t) => {
  const alternating = Array.from({ length: 40 }, (_, i) => i % 2 === 0);
  t.true(run(alternating, 2, 2).every((s) => s === 'up'));
  t.true(
    run(
      alternating.map((x) => !x),
      2,
      2,
    ).every((s) => s === 'down'),
  );
});

test('times come from the injected clock: sinceMs at the transition, lastSuccessMs, lastError', (t) => {
  const s = unknownCheckState(500);
  t.is(s.sinceMs, 500);
  t.true(applyResult(s, true, 1000, 2, 2));
  t.like(s, { status: 'up', sinceMs: 1000, lastSuccessMs: 1000, lastResultMs: 1000, lastError: '' });
  t.false(applyResult(s, false, 2000, 2, 2, 'timeout'));
  t.like(s, { status: 'up', sinceMs: 1000, lastSuccessMs: 1000, lastResultMs: 2000, lastError: 'timeout', streak: 1 });
  t.true(applyResult(s, false, 3000, 2, 2, 'timeout'));
  t.like(s, { status: 'down', sinceMs: 3000, lastSuccessMs: 1000, streak: 0 });
});

test('combineStatus: down beats unknown beats up; nothing is up', (t) => {
  t.is(combineStatus([]), 'up');
  t.is(combineStatus(['up', 'up']), 'up');
  t.is(combineStatus(['up', 'unknown']), 'unknown');
  t.is(combineStatus(['unknown', 'down', 'up']), 'down');
});

test('groupStatus: all, any, quorum, with unknown points left open only while they could decide', (t) => {
  t.is(groupStatus('all', []), undefined);
  t.is(groupStatus('all', ['up', 'up', 'up']), 'up');
  t.is(groupStatus('all', ['up', 'down', 'up']), 'down');
  t.is(groupStatus('all', ['up', 'unknown']), 'unknown');
  t.is(groupStatus('any', ['down', 'down', 'up']), 'up');
  t.is(groupStatus('any', ['down', 'down']), 'down');
  t.is(groupStatus('any', ['down', 'unknown']), 'unknown');
  t.is(groupStatus('quorum', ['up', 'up', 'down']), 'up');
  t.is(groupStatus('quorum', ['up', 'down', 'down']), 'down');
  t.is(groupStatus('quorum', ['up', 'down', 'unknown']), 'unknown');
  t.is(groupStatus('quorum', ['up', 'up', 'down', 'down']), 'down', 'a tie is not a majority');
  t.is(groupStatus('quorum', ['up', 'up', 'up', 'down']), 'up');
});

test('a provisional status (carried over a monitor change) is decided by the first result, then rise/fall apply again', (t) => {
  const feed = (status: 'up' | 'down', results: boolean[]): string[] => {
    const s = { ...unknownCheckState(0), status, sinceMs: 500, provisional: true };
    return results.map((ok, i) => {
      applyResult(s, ok, 1000 * (i + 1), 3, 3);
      return `${s.status}${s.provisional ? '?' : ''}`;
    });
  };
  t.deepEqual(feed('down', [true, false, true]), ['up', 'up', 'up'], 'down, then one success: up at once, not after rise = 3');
  t.deepEqual(feed('up', [false, true, false]), ['down', 'down', 'down'], 'up, then one failure: down at once, not after fall = 3');
  t.deepEqual(feed('up', [true, false, false, false]), ['up', 'up', 'up', 'down'], 'confirmed up: fall counts again');
});
