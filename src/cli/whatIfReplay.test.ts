import test from 'ava';
import { formatReplaySummary, parseCapacities, summariseReplay } from './whatIfReplay.js';
import { readQueryLog } from './queryLogScan.js';

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

test('records falling to fail-safe and data centers over capacity: counted before and after, in the JSON and the table', (t) => {
  const { queries } = readQueryLog(
    [line('192.0.2.0/24'), line('192.0.2.0/24'), line('198.51.100.0/24'), line('203.0.113.0/24'), line('203.0.113.0/24', 'st.example.test')].join('\n'),
  );
  const s = summariseReplay(
    queries,
    [
      { live: { rcode: 0, dcs: ['a'] }, whatIf: { rcode: 0, dcs: [], failsafe: 'www.example.test/A' } },
      { live: { rcode: 0, dcs: ['b'] }, whatIf: { rcode: 0, dcs: ['a'] } },
      { live: { rcode: 0, dcs: [], failsafe: 'www.example.test/A' }, whatIf: { rcode: 0, dcs: ['a'] } },
      { live: { rcode: 0, dcs: ['b'] }, whatIf: { rcode: 0, dcs: ['b'] } },
    ],
    parseCapacities(['a=40%', 'b=50', 'c=10%']),
  );
  t.deepEqual(s.shareBefore, { '-': 20, a: 40, b: 40 });
  t.deepEqual(s.shareAfter, { '-': 40, a: 40, b: 20 });
  t.deepEqual(s.failsafe, [{ record: 'www.example.test/A', before: { queries: 1, networks: 1 }, after: { queries: 2, networks: 1 } }]);
  t.deepEqual(s.overCapacity, []);
  const over = summariseReplay(
    queries,
    [
      { live: { rcode: 0, dcs: ['a'] }, whatIf: { rcode: 0, dcs: ['a'] } },
      { live: { rcode: 0, dcs: ['b'] }, whatIf: { rcode: 0, dcs: ['a'] } },
      { live: { rcode: 0, dcs: ['b'] }, whatIf: { rcode: 0, dcs: ['a'] } },
      { live: { rcode: 0, dcs: ['b'] }, whatIf: { rcode: 0, dcs: ['b'] } },
    ],
    parseCapacities(['a=40%', 'b=50']),
  );
  t.deepEqual(over.overCapacity, [
    { dc: 'a', capacity: 40, before: 40, after: 80 },
    { dc: 'b', capacity: 50, before: 60, after: 20 },
  ]);
  t.is(
    formatReplaySummary(s),
    `5 queries (4 distinct name, type and client network)
4 queries from 3 client networks change data center

data center     before %   after %
-                     20        40
a                     40        40
b                     40        20

from -> to                      queries  networks
a -> -                                2         1
b -> a                                1         1
- -> a                                1         1

client networks moving most
  192.0.2.0/24             www.example.test A: a -> - (2)
  198.51.100.0/24          www.example.test A: b -> a (1)
  203.0.113.0/24           www.example.test A: - -> a (1)

records answered by fail-safe   queries before  after   networks before  after
www.example.test/A                           1      2                 1      1
`,
  );
  t.true(
    formatReplaySummary(over).endsWith(
      '\nover capacity   capacity %  before %   after %\na                       40        40        80\nb                       50        60        20\n',
    ),
    formatReplaySummary(over),
  );
  for (const bad of ['a', 'a=0%', 'a=101%', 'a=x%']) t.throws(() => parseCapacities([bad]), { message: /--capacity/ });
  t.throws(() => parseCapacities(['a=10', 'a=20']), { message: /given twice/ });
});

test('the query log scan equals a JSON parse of every line: escapes, nested values, key order, other lines', (t) => {
  const lines = [
    JSON.stringify({ level: 30, component: 'query-log', qname: 'a.example.test', qtype: 'A', client: '192.0.2.0/24', dcs: ['x', 'y'] }),
    JSON.stringify({ client: '192.0.2.0/24', nested: { qname: 'not.this', component: 'x' }, qtype: 'A', qname: 'a.example.test', component: 'query-log' }),
    JSON.stringify({ component: 'query-log', qname: 'q"uote\\d.example.test', qtype: 'AAAA', client: '2001:db8::/48', msg: 'é, {[' }),
    JSON.stringify({ component: 'query-log', qname: 'n.example.test', qtype: 1, client: '192.0.2.0/24' }),
    JSON.stringify({ component: 'other', qname: 'a.example.test', qtype: 'A', client: '192.0.2.0/24' }),
    JSON.stringify({ component: 'query-log', qname: 'a.example.test', qtype: 'A' }),
    '  ',
    '{"component":"query-log","qname":"cut',
    JSON.stringify({ component: 'query-log', qname: 'a.example.test', qtype: 'A', client: '198.51.100.0/24' }),
  ];
  const { queries, skipped } = readQueryLog(Buffer.from(lines.join('\r\n'), 'utf8'));
  t.deepEqual(queries, [
    { name: 'a.example.test', type: 'A', client: '192.0.2.0/24', count: 2 },
    { name: 'q"uote\\d.example.test', type: 'AAAA', client: '2001:db8::/48', count: 1 },
    { name: 'a.example.test', type: 'A', client: '198.51.100.0/24', count: 1 },
  ]);
  t.is(skipped, 4);
});
