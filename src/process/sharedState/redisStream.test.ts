import test from 'ava';
import { stopAllRedis, startRedis } from '../../../test/support/redisServer.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { connectRedis, openStateStore, type OpenedStore } from './openStateStore.js';
import { RedisStateStore } from './redisStateStore.js';
import { storeSchema } from './storeSchema.js';

const opened: OpenedStore[] = [];
test.after.always(async () => {
  await Promise.all(opened.map((o) => o.stop()));
  await stopAllRedis();
});

async function node(url: string, name: string, namespace: string): Promise<RedisStateStore> {
  const o = openStateStore(storeSchema.parse({ redis: { url, node: name, namespace, connectTimeoutSeconds: 5 } }));
  opened.push(o);
  await o.ready();
  return o.store as RedisStateStore;
}

test('a stream opened while the reader blocks is followed at once, not after the blocking read ends', async (t) => {
  const redis = await startRedis();
  const { redis: config } = storeSchema.parse({ redis: { url: redis.url, node: 'x', namespace: 's3' } });
  // Reads block 20 s: without waking the reader, b would see the stream only when its read ends.
  const make = (name: string): RedisStateStore => {
    const store = new RedisStateStore({ connect: (blockMs) => connectRedis(config, blockMs), node: name, namespace: '{s3}', logLength: 1000, blockMs: 20_000 });
    opened.push({ store, ready: () => store.ready(5000), stop: () => store.stop() });
    return store;
  };
  const a = make('a');
  const b = make('b');
  t.true(await a.ready(5000));
  t.true(await b.ready(5000));
  await new Promise((r) => setTimeout(r, 500));
  const woken: number[] = [];
  b.stream<{ n: number }>('late', { maxLength: 10 }).watch((e) => woken.push(e.value.n));
  // Watchers wake long polls for entries after the tail b found when it opened the stream.
  await new Promise((r) => setTimeout(r, 300));
  a.stream<{ n: number }>('late', { maxLength: 10 }).append({ n: 1 });
  const started = Date.now();
  await waitFor('b’s watcher sees a’s append', () => woken.length === 1, 19_000);
  t.true(Date.now() - started < 8000, `seen after ${Date.now() - started} ms (reads block 20 s)`);
});

test('an entry appended on one node is given to a group once, whichever node the group reads from; every group gets it', async (t) => {
  const redis = await startRedis();
  const a = await node(redis.url, 'a', 's1');
  const b = await node(redis.url, 'b', 's1');
  const sa = a.stream<{ n: number }>('q', { maxLength: 100 });
  const sb = b.stream<{ n: number }>('q', { maxLength: 100 });
  const woken: number[] = [];
  sb.watch((e) => woken.push(e.value.n));
  // Watchers see entries after the tail b found when it opened the stream: appends racing that
  // first exchange may fall before it (CI: a's five appends reached Redis first, none was seen).
  await new Promise((r) => setTimeout(r, 300));
  for (let n = 0; n < 5; n++) sa.append({ n });
  await waitFor('b’s watchers see a’s appends', () => woken.length === 5, 5000);
  t.deepEqual(woken, [0, 1, 2, 3, 4]);
  t.is(await sb.backlog('dc:x'), 5, 'a group never read has the whole stream before it');
  const fromB = await sb.read('dc:x', 3);
  t.deepEqual(
    fromB.map((e) => e.value.n),
    [0, 1, 2],
  );
  t.regex(fromB[0]!.id, /^\d+-\d+$/, 'Redis’s ids');
  t.deepEqual(
    (await sa.read('dc:x', 10)).map((e) => e.value.n),
    [3, 4],
    'the same group on the other node continues after what b was given',
  );
  t.deepEqual(await sb.read('dc:x', 10), []);
  t.deepEqual(await sa.read('dc:x', 10), []);
  t.is(await sa.backlog('dc:x'), 0);
  t.deepEqual(
    (await sa.read('zone:y', 10)).map((e) => e.value.n),
    [0, 1, 2, 3, 4],
    'another group gets every entry too',
  );
  t.is(redis.cli('XLEN', '{s1}:stream:q'), '5');
});

test('many readers of one group on two nodes racing: every entry is given exactly once', async (t) => {
  const redis = await startRedis();
  const a = await node(redis.url, 'a', 's2');
  const b = await node(redis.url, 'b', 's2');
  const sa = a.stream<number>('q');
  const sb = b.stream<number>('q');
  for (let n = 0; n < 300; n++) (n % 2 ? sa : sb).append(n);
  const given: number[] = [];
  await waitFor(
    'every entry given',
    async () => {
      const got = await Promise.all([sa.read('g', 7), sb.read('g', 7), sa.read('g', 5), sb.read('g', 3)]);
      for (const batch of got) for (const e of batch) given.push(e.value);
      return given.length >= 300;
    },
    10_000,
  );
  t.is(given.length, 300);
  t.is(new Set(given).size, 300, 'no entry given twice');
});

test('the stream is bounded; appends made while Redis is away are sent on reconnection; a group lost with an emptied Redis is recreated', async (t) => {
  const redis = await startRedis();
  const a = await node(redis.url, 'a', 's3');
  const b = await node(redis.url, 'b', 's3');
  const sa = a.stream<number>('q', { maxLength: 10 });
  const sb = b.stream<number>('q', { maxLength: 10 });
  for (let n = 0; n < 25; n++) sa.append(n);
  await waitFor('a’s appends stored', () => redis.cli('XLEN', '{s3}:stream:q') === '10', 5000);
  t.deepEqual(
    (await sb.read('g', 100)).map((e) => e.value),
    [15, 16, 17, 18, 19, 20, 21, 22, 23, 24],
    'the oldest beyond the bound are dropped',
  );
  await redis.kill();
  await waitFor('a sees Redis gone', () => a.connection().state === 'disconnected', 10_000);
  t.deepEqual(await sa.read('g', 10), [], 'no reads while Redis is away');
  for (let n = 100; n < 130; n++) sa.append(n);
  await redis.restart();
  await waitFor('a reconnects', () => a.connection().state === 'connected', 15_000);
  await waitFor('queued appends sent, within the bound', () => redis.cli('XLEN', '{s3}:stream:q') === '10', 10_000);
  await waitFor('b reconnects', () => b.connection().state === 'connected', 15_000);
  t.deepEqual(
    (await sb.read('g', 100)).map((e) => e.value),
    [120, 121, 122, 123, 124, 125, 126, 127, 128, 129],
    'the group, lost with the data, starts again at the oldest entry kept',
  );
});
