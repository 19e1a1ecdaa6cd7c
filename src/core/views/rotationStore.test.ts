import test from 'ava';
import { RotationStore } from './rotationStore.js';

test('next advances per key and wraps at 2^31', (t) => {
  const r = new RotationStore(new Map([['w', 0x7fffffff]]));
  t.deepEqual([r.next('a'), r.next('a'), r.next('b'), r.next('a')], [0, 1, 0, 2]);
  t.deepEqual([r.next('w'), r.next('w')], [0x7fffffff, 0]);
});

test('a read-only view reads the live counters without advancing them', (t) => {
  const r = new RotationStore();
  const view = r.readOnlyView();
  r.next('a');
  t.deepEqual([view.next('a'), view.next('a'), view.next('b')], [1, 1, 0]);
  t.is(r.next('a'), 1);
  t.is(view.next('a'), 2);
  t.is(r.size, 1);
});

test('clone is independent of the original', (t) => {
  const r = new RotationStore();
  r.next('a');
  const c = r.clone();
  c.next('a');
  t.is(r.next('a'), 1);
});
