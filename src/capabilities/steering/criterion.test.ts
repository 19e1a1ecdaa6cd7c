import test from 'ava';
import { describeCriterion, rankByCriterion, type Criterion } from './criterion.js';

const rank = (values: Record<string, number>, c: Criterion) => rankByCriterion(Object.keys(values), Object.values(values), c);
const groups = (values: Record<string, number>, c: Criterion): string[][] => rank(values, c).groups;

test('lowest: ascending, equal values share a group in input order', (t) => {
  t.deepEqual(groups({ a: 30, b: 10, c: 20, d: 10 }, { kind: 'lowest' }), [['b', 'd'], ['c'], ['a']]);
});

test('highest: descending, equal values share a group', (t) => {
  t.deepEqual(groups({ a: 3, b: 12, c: 12, d: 0 }, { kind: 'highest' }), [['b', 'c'], ['a'], ['d']]);
});

test('equals: exactly the target forms the only group, the others are ranked out', (t) => {
  const r = rank({ a: 5, b: 5.0001, c: 5, d: 4 }, { kind: 'equals', target: 5 });
  t.deepEqual(r.groups, [['a', 'c']]);
  t.deepEqual(r.rankedOut, ['b', 'd']);
});

test('equals: nothing at the target ranks everything out', (t) => {
  const r = rank({ a: 1, b: 2 }, { kind: 'equals', target: 3 });
  t.deepEqual(r.groups, []);
  t.is(r.rankedOut.length, 2);
});

test('within an absolute margin of the lowest: the margin edge is inside, the rest follow in order', (t) => {
  const c: Criterion = { kind: 'within', margin: 5, percent: false, prefer: 'lowest' };
  t.deepEqual(groups({ a: 20, b: 15, c: 10, d: 16, e: 30, f: 30 }, c), [['c', 'b'], ['d'], ['a'], ['e', 'f']]);
});

test('within a percentage of the highest', (t) => {
  const c: Criterion = { kind: 'within', margin: 10, percent: true, prefer: 'highest' };
  // best 200: 10 % = 20, so 180 is inside and 179 outside.
  t.deepEqual(groups({ a: 180, b: 200, c: 179, d: 190 }, c), [['b', 'd', 'a'], ['c']]);
});

test('within: a percentage margin tolerates floating point at its edge', (t) => {
  const c: Criterion = { kind: 'within', margin: 10, percent: true, prefer: 'lowest' };
  t.deepEqual(groups({ a: 0.3, b: 0.33, c: 0.3300001 }, c), [['a', 'b'], ['c']]);
});

test('within: every other value outside the margin leaves the best alone in the first group', (t) => {
  const c: Criterion = { kind: 'within', margin: 1, percent: false, prefer: 'lowest' };
  t.deepEqual(groups({ a: 10, b: 20, c: 30 }, c), [['a'], ['b'], ['c']]);
});

test('no entries, no groups', (t) => {
  t.deepEqual(groups({}, { kind: 'lowest' }), []);
  t.deepEqual(groups({}, { kind: 'within', margin: 1, percent: false, prefer: 'highest' }), []);
});

test('descriptions for /explain', (t) => {
  t.is(describeCriterion({ kind: 'lowest' }), 'lowest');
  t.is(describeCriterion({ kind: 'equals', target: 1, word: 'up' }), 'equals up');
  t.is(describeCriterion({ kind: 'equals', target: 7 }), 'equals 7');
  t.is(describeCriterion({ kind: 'within', margin: 10, percent: true, prefer: 'highest' }), 'within 10% prefer highest');
});
