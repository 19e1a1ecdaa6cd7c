import test from 'ava';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import { createLogger } from '../core/telemetry/logger.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { Engine } from '../pipeline/engine.js';
import { compileSnapshot } from '../pipeline/snapshot.js';
import type { CompiledGslbRecord } from '../pipeline/selection/stage.js';
import { CAPABILITIES } from '../process/capabilities.js';
import type { Config } from '../process/configSchema.js';
import { parseConfigText } from '../process/loadConfig.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { dcsDown, fixedContext } from '../../test/support/selectionFixture.js';
import { ConsoleFeed, endpointsByDcSteps } from './consoleFeed.js';

/**
 * Issue 17: the console's state listed every data center's endpoints by walking every record in
 * one turn (20,000 records: 25–50 ms), for each `/console/state` and each update of the live
 * stream. The walk runs in steps, once per record list; these tests count records read, not time.
 */

const RECORDS = 2048;
const snapshot = compileSnapshot<Config>({
  file: 'gslbd.yaml',
  config: parseConfigText(largeConfig({ records: RECORDS, services: 50 })),
  capabilities: CAPABILITIES,
  state: { geo: emptyLocationDb(), health: dcsDown(), metrics: emptyMetricView },
  nowMs: 1_700_000_000_000,
});

/** `records` whose element reads are counted in `reads.n`. */
function counted(records: readonly CompiledGslbRecord[], reads: { n: number }): readonly CompiledGslbRecord[] {
  return new Proxy(records, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.n++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

test('the endpoints per data center are listed reading at most 256 records between two yields, sorted as before', (t) => {
  const reads = { n: 0 };
  const steps = endpointsByDcSteps(counted(snapshot.records, reads));
  let most = 0;
  let yields = 0;
  let lists;
  for (;;) {
    reads.n = 0;
    const next = steps.next();
    most = Math.max(most, reads.n);
    if (next.done) {
      lists = next.value;
      break;
    }
    yields++;
  }
  t.true(most <= 256, `${most} records read in one step`);
  t.true(yields >= RECORDS / 256, `${yields} yields`);
  // As the state listed them before: every endpoint a record names, per data center, sorted.
  const before = new Map(snapshot.dataCenters.map((d) => [d.name, new Set<string>()]));
  for (const r of snapshot.records) for (const c of r.candidates) for (const e of c.endpoints) before.get(c.dc.name)?.add(e.key);
  t.deepEqual(lists, new Map([...before].map(([dc, keys]) => [dc, [...keys].sort()])));
  t.is(lists.get('us-east')?.length, 50);
});

test("the console's state reads the records once per record list, not on every state", async (t) => {
  const reads = { n: 0 };
  const engine = new Engine({ ...snapshot, records: counted(snapshot.records, reads) }, fixedContext(), createLogger('silent'));
  const feed = new ConsoleFeed(engine, new EngineMetrics(), () => ({ status: 'ok', reasons: [] }));
  const first = await feed.state();
  t.is(reads.n, RECORDS);
  t.deepEqual(
    first.dataCenters.map((d) => [d.name, d.endpoints.length]),
    [
      ['us-east', 50],
      ['eu-west', 50],
      ['ap-northeast', 50],
    ],
  );
  const second = await feed.state();
  t.is(reads.n, RECORDS, 'the second state read no record');
  t.deepEqual(second.dataCenters, first.dataCenters);
});
