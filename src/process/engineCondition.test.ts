import test from 'ava';
import { Registry } from 'prom-client';
import { FailsafeWatch } from '../capabilities/health/failsafeWatch.js';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { createLogger } from '../core/telemetry/logger.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { compileSnapshot } from '../pipeline/snapshot.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { dcsDown } from '../../test/support/selectionFixture.js';
import { CAPABILITIES } from './capabilities.js';
import type { Config } from './configSchema.js';
import { engineCondition } from './engineCondition.js';
import { parseConfigText } from './loadConfig.js';
import { ReloadHistory } from './reloadHistory.js';

/**
 * Issue 17: with every record of a large configuration in its all-down fallback, each `/healthz`
 * and `/status` described every record again, and each scrape set the fail-safe gauge of every
 * record again. These tests count objects built, not time.
 */

const RECORDS = 1024;
const NOW = 1_700_000_000_000;
const snapshot = compileSnapshot<Config>({
  file: 'x',
  config: parseConfigText(largeConfig({ records: RECORDS })),
  capabilities: CAPABILITIES,
  state: { geo: emptyLocationDb(), health: dcsDown(), metrics: emptyMetricView },
  nowMs: NOW,
});
const allDown = dcsDown('us-east', 'eu-west', 'ap-northeast');

test('the fail-safe reason is described once per set of records in the fallback, and again when one enters or leaves', async (t) => {
  const registry = new Registry();
  const watch = new FailsafeWatch(createLogger('silent'), registry);
  const reloads = new ReloadHistory();
  watch.check(snapshot.records, allDown, NOW);
  const first = engineCondition(watch, reloads);
  t.is(first.status, 'degraded');
  t.is((first.reasons[0]!.detail as unknown[]).length, RECORDS);
  t.is(engineCondition(watch, reloads).reasons[0], first.reasons[0], 'the same reason object: not described again');
  watch.check(snapshot.records, allDown, NOW + 1000);
  t.is(engineCondition(watch, reloads).reasons[0], first.reasons[0], 'a check that changed nothing keeps it');
  const active = async () => (await registry.getSingleMetric('gslbd_failsafe_active')!.get()).values;
  t.is((await active()).length, RECORDS);
  t.deepEqual((await active())[0], { value: 1, labels: { record: 'r0.big.test/A' } });
  watch.check(snapshot.records, dcsDown(), NOW + 2000);
  t.deepEqual(engineCondition(watch, reloads).reasons, []);
  t.deepEqual(await active(), []);
  watch.check(snapshot.records.slice(0, 2), allDown, NOW + 3000);
  const again = engineCondition(watch, reloads).reasons[0]!;
  t.not(again, first.reasons[0]);
  t.like(again, { kind: 'failsafe', since: new Date(NOW + 3000).toISOString(), detail: [{ record: 'r0.big.test/A' }, { record: 'r1.big.test/A' }] });
  t.deepEqual(
    (await active()).map((v) => v.labels.record),
    ['r0.big.test/A', 'r1.big.test/A'],
  );
});
