import test from 'ava';
import { Histogram, Registry } from 'prom-client';
import { BucketHistogram } from './bucketHistogram.js';

const BUCKETS = [0.001, 0.01, 0.1, 1];
const VALUES = [0.0005, 0.001, 0.002, 0.05, 0.05, 0.5, 3, 0.0001];

test('the same text as a prom-client histogram given the same observations (labels, buckets, +Inf, sum, count)', async (t) => {
  const ours = new Registry();
  const theirs = new Registry();
  const fast = new BucketHistogram<'monitor' | 'result'>({
    name: 'h_seconds',
    help: 'help text',
    labelNames: ['monitor', 'result'],
    buckets: BUCKETS,
    registry: ours,
  });
  const reference = new Histogram({ name: 'h_seconds', help: 'help text', labelNames: ['monitor', 'result'] as const, buckets: BUCKETS, registers: [theirs] });
  // Cells are exported in the order they were made; prom-client's in the order first observed.
  const fail = fast.cell({ monitor: 'web', result: 'fail' });
  const ok = fast.cell({ monitor: 'web', result: 'ok' });
  t.is(fast.cell({ monitor: 'web', result: 'ok' }), ok, 'one cell per label combination');
  VALUES.forEach((v, i) => {
    (i % 3 === 0 ? fail : ok).observe(v);
    reference.observe({ monitor: 'web', result: i % 3 === 0 ? 'fail' : 'ok' }, v);
  });
  const text = await ours.metrics();
  t.is(text, await theirs.metrics());
  t.regex(text, /^h_seconds_bucket\{le="0.01",monitor="web",result="ok"\} 3$/m);
  t.regex(text, /^h_seconds_count\{monitor="web",result="fail"\} 3$/m);

  // The JSON form too, but for prom-client's exemplar fields (none here).
  const json = async (r: Registry) =>
    (await r.getMetricsAsJSON()).map((m) => ({
      name: m.name,
      help: m.help,
      type: m.type,
      values: m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: (v as { metricName?: string }).metricName })),
    }));
  t.deepEqual(await json(ours), await json(theirs));

  fast.reset();
  t.regex(await ours.metrics(), /^h_seconds_count\{monitor="web",result="ok"\} 0$/m, 'reset zeroes the cells it keeps');
});

test('without labels', async (t) => {
  const registry = new Registry();
  const lag = new BucketHistogram({ name: 'lag_seconds', help: 'lag', buckets: BUCKETS, registry });
  const cell = lag.cell();
  cell.observe(0.02);
  cell.observe(2);
  const text = await registry.metrics();
  t.regex(text, /^lag_seconds_bucket\{le="0.1"\} 1$/m);
  t.regex(text, /^lag_seconds_bucket\{le="\+Inf"\} 2$/m);
  t.regex(text, /^lag_seconds_sum 2.02$/m);
});
