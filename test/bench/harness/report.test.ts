import test from 'ava';
import { formatQuantity, median, renderMarkdown, summariseTable } from './report.js';

test('median of odd and even counts', (t) => {
  t.is(median([3, 1, 2]), 2);
  t.is(median([4, 1, 3, 2]), 2.5);
  t.throws(() => median([]), { message: 'median of no values' });
});

test('a table summary has the median, spread and ratio to the baseline median per row', (t) => {
  const s = summariseTable('listener', 'Listener', 'queries/s', 'node', [
    { id: 'node', label: 'Node', group: 'g', values: [100, 120, 110], details: [{}, {}, {}] },
    { id: 'gslbd', label: 'gslbd', group: 'g', values: [50, 60, 40], details: [{ 'cpu %': 10 }, { 'cpu %': 30 }, { 'cpu %': 20 }] },
    { id: 'broken', label: 'Broken', group: 'g', values: [], details: [], error: 'exploded' },
  ]);
  t.deepEqual(
    s.rows.map((r) => [r.id, r.median, r.min, r.max, r.ratio, r.details]),
    [
      ['node', 110, 100, 120, 1, {}],
      ['gslbd', 50, 40, 60, 50 / 110, { 'cpu %': 20 }],
      ['broken', null, null, null, null, {}],
    ],
  );
  t.is(s.rows[2]!.error, 'exploded');
});

test('rows of a table whose baseline failed have no ratio', (t) => {
  const s = summariseTable('t', 'T', 'x/s', 'base', [
    { id: 'base', label: 'Base', group: 'g', values: [], details: [] },
    { id: 'other', label: 'Other', group: 'g', values: [5], details: [{}] },
  ]);
  t.is(s.rows[1]!.ratio, null);
});

test('quantities print with three significant digits and k/M suffixes', (t) => {
  t.deepEqual([1234567, 45210, 9999, 123.4, 2.137, 0.5].map(formatQuantity), ['1.23M', '45.2k', '9999', '123', '2.14', '0.50']);
});

test('the Markdown table names the baseline and shows failures', (t) => {
  const s = summariseTable('t', 'Title', 'q/s', 'a', [
    { id: 'a', label: 'A', group: 'g', values: [2000, 1000, 3000], details: [{}, {}, {}] },
    { id: 'b', label: 'B', group: 'g', values: [], details: [], error: 'no dnsperf' },
  ]);
  const lines = renderMarkdown([s]).split('\n');
  t.is(lines[2], '| Title | A | q/s | 2000 | 1000–3000 | 3 | 1.00 (baseline) |  |');
  t.is(lines[3], '|  | B | q/s | failed: no dnsperf | – | 0 | – |  |');
});
