import test from 'ava';
import { seededRandom } from '../../../test/support/seededRandom.js';
import { ClientNetworkRows } from './clientNetworkRows.js';

/** [value, atMs] of (key, metric, dc), or undefined when the network is not held. */
function sample(rows: ClientNetworkRows, key: string | number, metric: number, dc: number): [number, number] | undefined {
  const slot = rows.slotOf(key);
  if (slot < 0) return undefined;
  const i = rows.offset(slot, dc);
  return [rows.column(metric)[i]!, rows.column(metric)[i + 1]!];
}

test('a written sample reads back; unwritten ones are NaN; a network is one slot whatever its key type', (t) => {
  const rows = new ClientNetworkRows(4, 3);
  const slot = rows.touch(12989284);
  rows.write(slot, 2, 1, 0.4, 1000);
  t.deepEqual(sample(rows, 12989284, 2, 1), [0.4, 1000]);
  t.deepEqual(sample(rows, 12989284, 2, 0), [NaN, NaN]);
  t.is(rows.touch(12989284), slot);
  t.is(rows.touch('6/536939960/65536/0/0'), slot + 1);
  t.is(rows.slotOf(-12989285), -1);
  t.is(rows.size, 2);
});

test('eviction takes the least recently updated networks; a reused slot starts empty', (t) => {
  const rows = new ClientNetworkRows(1, 1);
  for (const k of [1, 2, 3]) rows.write(rows.touch(k), 0, 0, k, k);
  rows.touch(1);
  t.is(rows.evictTo(2), 1);
  t.is(rows.slotOf(2), -1, 'network 2 was updated least recently');
  t.deepEqual(sample(rows, 1, 0, 0), [1, 1]);
  const reused = rows.touch(4);
  t.is(reused, 1, 'the evicted network’s slot');
  t.deepEqual(sample(rows, 4, 0, 0), [NaN, NaN]);
  t.is(rows.evictTo(0), 3);
  t.is(rows.size, 0);
});

test('rows survive growth past the initial capacity', (t) => {
  const rows = new ClientNetworkRows(4, 3);
  for (let k = 0; k < 1000; k++) rows.write(rows.touch(k), 3, 2, k / 10, k);
  for (const k of [0, 15, 16, 999]) t.deepEqual(sample(rows, k, 3, 2), [k / 10, k]);
});

test('reshape keeps the columns of remaining data centers, in the new order, and forgets networks left empty', (t) => {
  const rows = new ClientNetworkRows(2, 3);
  rows.write(rows.touch(1), 0, 0, 10, 100);
  rows.write(rows.touch(1), 1, 2, 12, 102);
  rows.write(rows.touch(2), 0, 1, 21, 201);
  rows.write(rows.touch(3), 1, 2, 32, 302);
  rows.reshape([2, -1, 0]);
  t.deepEqual(sample(rows, 1, 0, 2), [10, 100]);
  t.deepEqual(sample(rows, 1, 1, 0), [12, 102]);
  t.deepEqual(sample(rows, 1, 0, 1), [NaN, NaN], 'a new data center starts empty');
  t.is(rows.slotOf(2), -1, 'network 2 only had samples of the removed data center');
  t.deepEqual(sample(rows, 3, 1, 0), [32, 302]);
  t.is(rows.size, 2);
  rows.touch(1);
  t.is(rows.evictTo(1), 1);
  t.is(rows.slotOf(3), -1, 'update order survives the reshape');
});

test('under random writes and evictions it holds exactly what a Map-ordered LRU holds, in the same order', (t) => {
  const random = seededRandom(11);
  const rows = new ClientNetworkRows(1, 1);
  // The reference: a Map whose insertion order is the update order, evicted from its first key.
  const model = new Map<string | number, number>();
  const keyOf = (): string | number => {
    const r = Math.floor(random() * 600);
    if (r < 300) return r * 4099;
    if (r < 590) return -1 - r * 2 ** 40;
    return `6/${r}/0/0/0`;
  };
  for (let step = 0; step < 20_000; step++) {
    const key = keyOf();
    rows.write(rows.touch(key), 0, 0, step, step);
    model.delete(key);
    model.set(key, step);
    if (step % 7 === 0) {
      const max = Math.floor(random() * 250);
      let expected = 0;
      for (const k of model.keys()) {
        if (model.size <= max) break;
        model.delete(k);
        expected++;
      }
      t.is(rows.evictTo(max), expected);
    }
  }
  t.is(rows.size, model.size);
  for (let r = 0; r < 600; r++) {
    for (const key of [r * 4099, -1 - r * 2 ** 40, `6/${r}/0/0/0`]) {
      const slot = rows.slotOf(key);
      const want = model.get(key);
      if (want === undefined) t.is(slot, -1, String(key));
      else t.is(rows.column(0)[rows.offset(slot, 0)], want, String(key));
    }
  }
});
