import test from 'ava';
import { InProcessStateStore } from './stateStore.js';

test('a stream gives every group every entry once, oldest first, groups independent', async (t) => {
  const s = new InProcessStateStore().stream<number>('q', { maxLength: 100 });
  for (let i = 0; i < 5; i++) s.append(i);
  t.deepEqual(
    (await s.read('a', 3)).map((e) => e.value),
    [0, 1, 2],
  );
  t.deepEqual(
    (await s.read('a', 10)).map((e) => e.value),
    [3, 4],
  );
  t.deepEqual(await s.read('a', 10), []);
  t.is(await s.backlog('a'), 0);
  t.is(await s.backlog('b'), 5, 'a group never read has the whole stream before it');
  t.deepEqual(
    (await s.read('b', 10)).map((e) => e.value),
    [0, 1, 2, 3, 4],
  );
  s.append(5);
  t.deepEqual(
    (await s.read('a', 10)).map((e) => [e.id, e.value]),
    [['5', 5]],
  );
});

test('a stream keeps at most maxLength entries; a group behind the bound reads from the oldest kept', async (t) => {
  const s = new InProcessStateStore().stream<number>('q', { maxLength: 10 });
  s.append(-1);
  t.deepEqual(
    (await s.read('slow', 1)).map((e) => e.value),
    [-1],
  );
  for (let i = 0; i < 3000; i++) {
    s.append(i);
    t.true(s.length <= 10);
  }
  t.is(s.length, 10);
  t.is(await s.backlog('slow'), 10);
  t.deepEqual(
    (await s.read('slow', 100)).map((e) => e.value),
    [2990, 2991, 2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999],
  );
});

test('a stream wakes its watchers synchronously on append, and the same name is the same stream', (t) => {
  const store = new InProcessStateStore();
  const seen: number[] = [];
  const stop = store.stream<number>('q').watch((e) => seen.push(e.value));
  store.stream<number>('q').append(7);
  t.deepEqual(seen, [7]);
  stop();
  store.stream<number>('q').append(8);
  t.deepEqual(seen, [7]);
  t.throws(() => store.stream('bad', { maxLength: 0 }), { instanceOf: RangeError });
});
