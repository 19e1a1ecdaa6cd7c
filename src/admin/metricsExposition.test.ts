import test from 'ava';
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { METRIC_SAMPLES_PER_STEP, metricsExposition } from './metricsExposition.js';

/**
 * Issue 17: with every record of a large configuration in its all-down fallback, the fail-safe
 * metrics hold a sample per record, and `registry.metrics()` wrote them all in one turn. These
 * tests count turns, not time.
 */

const RECORDS = 3000;

/** A registry like the engine's in an all-down fallback: per-record series, escapes, a histogram, a summary, a gauge read by `collect`. */
function registry(): Registry {
  const r = new Registry();
  const entered = new Counter({ name: 'test_failsafe_entered_total', help: 'entries, by "record"\nand \\ more', labelNames: ['record'], registers: [r] });
  for (let i = 0; i < RECORDS; i++) entered.inc({ record: `r${i}.big.test/A${i % 97 === 0 ? '"q"\\\n' : ''}` }, (i % 5) + 1);
  new Gauge({
    name: 'test_failsafe_active',
    help: 'records in fallback',
    labelNames: ['record'],
    registers: [r],
    collect() {
      this.reset();
      for (let i = 0; i < RECORDS; i++) this.set({ record: `r${i}.big.test/A` }, 1);
    },
  });
  new Gauge({ name: 'test_empty', help: 'no sample', registers: [r] });
  const h = new Histogram({ name: 'test_seconds', help: 'latency', labelNames: ['door'], buckets: [0.001, 0.01, 0.1], registers: [r] });
  for (let i = 0; i < 200; i++) h.observe({ door: `door${i}` }, i / 1000);
  const s = new Summary({ name: 'test_summary', help: 'sizes', percentiles: [0.5, 0.9], registers: [r] });
  for (let i = 0; i < 100; i++) s.observe(i);
  new Gauge({ name: 'test_special', help: 'non-finite', registers: [r] }).set(Number.POSITIVE_INFINITY);
  return r;
}

test("the exposition written in slices is registry.metrics()'s text, byte for byte", async (t) => {
  const r = registry();
  t.is(await metricsExposition(r, 0), await r.metrics());
});

test('a scrape of many samples gives other events turns while it is written', async (t) => {
  const r = registry();
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  // Slices of 0 ms: each run of METRIC_SAMPLES_PER_STEP samples is a slice.
  const text = await metricsExposition(r, 0);
  clearInterval(ticker);
  t.true(text.includes('test_failsafe_active{record="r2999.big.test/A"} 1\n'));
  // Two metrics of 3,000 samples are 12 runs of 512, the histogram's 1,200 samples (200 series of
  // 3 buckets, +Inf, sum and count) 3, and the 3 others one run each: 18 slices.
  // registry.metrics() (before issue 17) gave other events 0 turns; the bound is a quarter of the slices.
  const slices = 2 * Math.ceil(RECORDS / METRIC_SAMPLES_PER_STEP) + Math.ceil(1200 / METRIC_SAMPLES_PER_STEP) + 3;
  t.log(`other events ran ${turns} times in ${slices} slices`);
  t.true(turns >= Math.floor(slices / 4), `other events ran ${turns} times during the scrape`);
});
