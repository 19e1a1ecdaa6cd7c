import test from 'ava';
import { CounterRates } from './counterRate.js';

test('rates are counter deltas per second; the first reading and a counter that went backwards (a reload) have none', (t) => {
  const r = new CounterRates();
  t.is(r.rate('stot', 100, 0), undefined);
  t.is(r.rate('stot', 300, 2000), 100);
  t.is(r.rate('stot', 5, 3000), undefined, 'reset: no negative rate');
  t.is(r.rate('stot', 55, 4000), 50, 'measured from the value after the reset');
  t.is(r.rate('stot', 60, 4000), undefined, 'no time passed');
});

test('retain forgets counters that went away', (t) => {
  const r = new CounterRates();
  r.rate('a', 1, 0);
  r.rate('b', 1, 0);
  r.retain(new Set(['a']));
  t.is(r.rate('a', 11, 1000), 10);
  t.is(r.rate('b', 11, 1000), undefined);
});
