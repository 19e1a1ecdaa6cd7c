import test from 'ava';
import { applyChunk, CHUNK_ITEMS, splitForTransfer } from './transferChunks.js';

test('long arrays at any level cross in pieces and are put back in order; short ones and scalars stay in the skeleton', (t) => {
  const long = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ tag, i, nested: [i, { deep: i }] }));
  const value = {
    records: long(CHUNK_ITEMS * 3 + 7, 'r'),
    zones: [
      { name: 'a', records: long(CHUNK_ITEMS + 1, 'z') },
      { name: 'b', records: long(2, 'y') },
    ],
    listeners: { dns: [{ port: 0 }] },
    watch: true,
    none: undefined,
    empty: [],
  };
  const { skeleton, chunks } = splitForTransfer(value);
  t.is(chunks.length, 4 + 2);
  t.true(chunks.every((c) => c.items.length <= CHUNK_ITEMS));
  const copy = structuredClone(skeleton) as typeof value;
  t.deepEqual(copy.records, []);
  t.deepEqual(copy.zones[1]!.records.length, 2);
  for (const c of chunks) applyChunk(copy, structuredClone(c));
  t.deepEqual(copy, value);
});
