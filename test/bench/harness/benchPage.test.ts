import test from 'ava';
import { markers, renderSection, replaceSection, SECTIONS_END, tablesOfGroup, type GroupRun } from './benchPage.js';
import { summariseTable } from './report.js';

const tables = [
  summariseTable('resolve', 'resolve() in-process', 'decisions/s', 'www', [
    { id: 'www', label: 'www A', group: 'resolve', values: [100, 110, 90], details: [{}, {}, {}] },
    { id: 'pref', label: 'pref A', group: 'policies', values: [50, 50, 50], details: [{}, {}, {}] },
    { id: 'host', label: 'host.cpu', group: 'multi-source', values: [40, 40, 40], details: [{}, {}, {}] },
  ]),
  summariseTable('geo', 'lookups', 'lookups/s', 'maxmind', [{ id: 'maxmind', label: 'maxmind', group: 'geo', values: [1], details: [{}] }]),
];

const run = (group: string): GroupRun => ({
  group,
  description: `what ${group} measures`,
  command: 'npm run bench',
  commit: 'abc1234',
  startedAt: '2026-12-01T17:00:05.000Z',
  seconds: 41.6,
  estimateSeconds: 58,
  runs: 3,
  machine: 'Xeon, 2 cores, node v20.20.2',
  loadBefore: 0.42,
  loadAfter: 1.5,
  tables: tablesOfGroup(tables, group),
  notes: ['a note'],
});

test("a group's tables: its own rows with each table's baseline, measured in the same run; tables it has no row in are left out", (t) => {
  const policies = tablesOfGroup(tables, 'policies');
  t.deepEqual(
    policies.map((x) => [x.id, x.rows.map((r) => [r.id, r.ratio])]),
    [
      [
        'resolve',
        [
          ['www', 1],
          ['pref', 0.5],
        ],
      ],
    ],
  );
  t.deepEqual(
    tablesOfGroup(tables, 'resolve').map((x) => x.rows.map((r) => r.id)),
    [['www']],
  );
});

test('a section names the command, commit, date, duration, machine and load, then the tables and notes, between its markers', (t) => {
  const text = renderSection(run('policies'));
  const lines = text.split('\n');
  t.is(lines[0], '<!-- bench:policies:start -->');
  t.is(lines.at(-1), '<!-- bench:policies:end -->');
  t.true(lines.includes('### policies'));
  t.true(
    text.includes(
      '`npm run bench` at abc1234, 2026-12-01 17:00 UTC: 3 runs, 42 s for this group (estimate 58 s); Xeon, 2 cores, node v20.20.2; load average 0.4 before, 1.5 after.',
    ),
  );
  t.regex(text, /\| resolve\(\) in-process \| www A \| decisions\/s \| 100 \|/);
  t.regex(text, /\|  \| pref A \| decisions\/s \| 50\.0 \| .* \| 0\.50 \|/);
  t.true(lines.includes('- a note'));
});

test('a section replaces only its own group; a new group is added before the end marker; broken markers are refused', (t) => {
  const page = ['# Benchmarks', 'by hand', markers('geo').start, 'old geo', markers('geo').end, '', SECTIONS_END, 'after'].join('\n');
  const withGeo = replaceSection(page, 'geo', 'NEW GEO');
  t.is(withGeo, ['# Benchmarks', 'by hand', 'NEW GEO', '', SECTIONS_END, 'after'].join('\n'));
  const withResolve = replaceSection(withGeo, 'resolve', 'RESOLVE');
  t.is(withResolve, ['# Benchmarks', 'by hand', 'NEW GEO', '', 'RESOLVE', '', SECTIONS_END, 'after'].join('\n'));
  t.throws(() => replaceSection('no markers', 'geo', 'x'), { message: /no <!-- bench:sections:end -->/ });
  t.throws(() => replaceSection(markers('geo').start, 'geo', 'x'), { message: /but no <!-- bench:geo:end -->/ });
});
