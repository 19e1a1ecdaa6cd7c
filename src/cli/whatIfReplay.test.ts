import test from 'ava';
import { formatReplaySummary, readQueryLog, summariseReplay } from './whatIfReplay.js';

const line = (client: string, name = 'www.example.test'): string =>
  JSON.stringify({ level: 30, component: 'query-log', qname: name, qtype: 'A', client, ecs: true, dcs: ['a'], msg: 'query' });

test('the query log is read as distinct queries with counts; other lines are skipped', (t) => {
  const text = [line('192.0.2.0/24'), '{"level":30,"msg":"gslbd up"}', 'not json', line('192.0.2.0/24'), line('198.51.100.0/24'), ''].join('\n');
  const { queries, skipped } = readQueryLog(text);
  t.deepEqual(queries, [
    { name: 'www.example.test', type: 'A', client: '192.0.2.0/24', count: 2 },
    { name: 'www.example.test', type: 'A', client: '198.51.100.0/24', count: 1 },
  ]);
  t.is(skipped, 2);
});

test('the summary weighs queries by count, splits two-DC answers, and lists the moves', (t) => {
  const { queries } = readQueryLog(
    [line('192.0.2.0/24'), line('192.0.2.0/24'), line('198.51.100.0/24'), line('203.0.113.0/24'), line('bad', 'x..')].join('\n'),
  );
  const s = summariseReplay(queries, [
    { live: { rcode: 0, dcs: ['a'] }, whatIf: { rcode: 0, dcs: ['b'] } },
    { live: { rcode: 0, dcs: ['a', 'b'] }, whatIf: { rcode: 0, dcs: ['a', 'b'] } },
    { live: { rcode: 0, dcs: ['b'] }, whatIf: { rcode: 0, dcs: [] } },
    { error: 'bad name' },
  ]);
  t.is(s.queries, 5);
  t.is(s.distinct, 4);
  t.is(s.errors, 1);
  t.deepEqual(s.shareBefore, { a: 62.5, b: 37.5 });
  t.deepEqual(s.shareAfter, { '-': 25, a: 12.5, b: 62.5 });
  t.is(s.movedQueries, 3);
  t.is(s.movedNetworks, 2);
  t.deepEqual(s.moves, [
    { from: 'a', to: 'b', queries: 2, networks: 1 },
    { from: 'b', to: '-', queries: 1, networks: 1 },
  ]);
  t.regex(formatReplaySummary(s), /a -> b\s+2\s+1/);
});
