import test from 'ava';
import { replayRows, replayRowsSteps, REPLAY_STEP } from '../admin/replayRows.js';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { compileSnapshot } from '../pipeline/snapshot.js';
import type { CompiledGslbRecord } from '../pipeline/selection/stage.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { dcsDown, fixedContext } from '../../test/support/selectionFixture.js';
import { CAPABILITIES } from './capabilities.js';
import type { Config } from './configSchema.js';
import { endpointKeysSteps } from './counterfactuals.js';
import { parseConfigText } from './loadConfig.js';

/**
 * Issue 17: a what-if replay of 5,000 queries on 20,000 records held the event loop 230-350 ms
 * (10,000 resolves in one go), and each what-if compilation listed the endpoint keys of every
 * record in one go (44-80 ms). Both run in steps; these tests count reads and yields, not time.
 */

const RECORDS = 1024;
const input = (health = dcsDown()) => ({
  file: 'x',
  config: parseConfigText(largeConfig({ records: RECORDS, services: 50 })),
  capabilities: CAPABILITIES,
  state: { geo: emptyLocationDb(), health, metrics: emptyMetricView },
  nowMs: 1_700_000_000_000,
});
const live = compileSnapshot<Config>(input());
const eastDown = compileSnapshot<Config>(input(dcsDown('us-east')));

test('the endpoint keys of a snapshot are listed reading at most 256 records between two yields', (t) => {
  let reads = 0;
  const records = new Proxy(live.records, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  }) as readonly CompiledGslbRecord[];
  const steps = endpointKeysSteps(records);
  let most = 0;
  let yields = 0;
  let keys;
  for (;;) {
    reads = 0;
    const next = steps.next();
    most = Math.max(most, reads);
    if (next.done) {
      keys = next.value;
      break;
    }
    yields++;
  }
  t.true(most <= 256, `${most} records read in one step`);
  t.true(yields >= RECORDS / 256, `${yields} yields`);
  t.deepEqual(keys, new Set(live.records.flatMap((r) => r.candidates.flatMap((c) => c.endpoints.map((e) => e.key)))));
  t.is(keys.size, 150);
});

test('a replay yields every REPLAY_STEP queries, with the rows of the replay in one go', (t) => {
  const queries = Array.from({ length: 500 }, (_, i) => ({
    name: `r${(i * 7) % RECORDS}.big.test`,
    type: i % 50 === 0 ? 'BOGUS' : 'A',
    client: `10.${i % 200}.${i % 250}.1`,
  }));
  const steps = replayRowsSteps(live, eastDown, fixedContext(), queries);
  let yields = 0;
  let rows;
  for (;;) {
    const next = steps.next();
    if (next.done) {
      rows = next.value;
      break;
    }
    yields++;
  }
  // The queries read, then replayed, each REPLAY_STEP at a time.
  t.true(yields >= 2 * Math.floor(queries.length / REPLAY_STEP), `${yields} yields`);
  t.deepEqual(rows, replayRows(live, eastDown, fixedContext(), queries));
  t.like(rows[1], { live: { rcode: 0 }, whatIf: { rcode: 0 } });
  t.true('error' in rows[0]!);
});
