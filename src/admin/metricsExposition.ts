import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry, type Metric, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { SLICE_MS } from '../pipeline/selection/steps.js';

/** Samples of one metric formatted by one prom-client call between two checks of the slice's time. */
export const METRIC_SAMPLES_PER_STEP = 512;

type MetricData = MetricObjectWithValues<MetricValue<string>>;

/** A histogram gives its exposition data (buckets, sum, count) apart from `get()` (prom-client 15). */
interface WithPromString {
  getForPromString(): Promise<MetricData>;
}

/**
 * `registry.metrics()`'s text, byte for byte, written in slices of about `sliceMs` ms with a
 * timer's turn (1 ms) between two slices, so a scrape never holds the event loop the front doors
 * answer on (issue 17): with every record of 20,000 in its all-down fallback,
 * `gslbd_failsafe_active` and `gslbd_failsafe_entered_total` hold 20,000 samples each, and one
 * `metrics()` call took 130-390 ms in one turn. The metrics are read one after another (prom-client
 * reads them all at once; every `collect` here is synchronous), and each metric's samples are
 * formatted by prom-client itself, {@link METRIC_SAMPLES_PER_STEP} at a time, through a registry
 * holding a stand-in that gives those samples; the `# HELP` and `# TYPE` lines of every run but
 * the first are dropped. Prometheus text format only (the engine's registry; not OpenMetrics).
 * Not `runInSlices`: prom-client's formatting is asynchronous and cannot run as generator steps.
 */
export async function metricsExposition(registry: Registry, sliceMs = SLICE_MS): Promise<string> {
  let sliceEnd = performance.now() + sliceMs;
  const pace = async (): Promise<void> => {
    if (performance.now() < sliceEnd) return;
    await sleep(1);
    sliceEnd = performance.now() + sliceMs;
  };
  const texts: string[] = [];
  for (const { name } of registry.getMetricsAsArray()) {
    const metric = registry.getSingleMetric(name)!;
    const data = 'getForPromString' in metric ? await (metric as unknown as WithPromString).getForPromString() : await metric.get();
    const values = data.values ?? [];
    let text = await formatted(data, values.slice(0, METRIC_SAMPLES_PER_STEP));
    await pace();
    for (let i = METRIC_SAMPLES_PER_STEP; i < values.length; i += METRIC_SAMPLES_PER_STEP) {
      const run = await formatted(data, values.slice(i, i + METRIC_SAMPLES_PER_STEP));
      // Without `# HELP ...\n# TYPE ...\n` (help text is escaped: no line break inside).
      text += run.slice(run.indexOf('\n', run.indexOf('\n') + 1));
      await pace();
    }
    texts.push(text);
  }
  return `${texts.join('\n\n')}\n`;
}

/** prom-client's text of `data` with only `values` as its samples. */
function formatted(data: MetricData, values: MetricData['values']): Promise<string> {
  const standIn = { name: data.name, get: () => Promise.resolve({ ...data, values }) };
  const one = new Registry();
  one.registerMetric(standIn as unknown as Metric);
  return one.getSingleMetricAsString(data.name);
}
