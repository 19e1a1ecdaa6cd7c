import test from 'ava';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { CAPABILITIES } from '../process/capabilities.js';
import { readCandidateConfig } from '../process/candidateConfig.js';
import type { Config } from '../process/configSchema.js';
import { largeConfig } from '../../test/support/largeConfig.js';
import { ask, dcsDown, fixedContext } from '../../test/support/selectionFixture.js';
import { compileSnapshot } from './snapshot.js';
import type { CompiledGslbRecord } from './selection/stage.js';

/**
 * Issue 17, reloads that never stop answering: every object of a snapshot is marked by each full
 * collection, and a reload holds two snapshots. What records say alike is one object for all of
 * them: a 20,000-record snapshot was 2.65 million objects (177.6 MB in a heap snapshot of the
 * engine), 2.01 million (144.1 MB) with the endpoints, zone maps, decision-cache arrays and
 * rotation keys shared or built on use.
 */
const snapshotOf = (records: number) => {
  const { config } = readCandidateConfig('sharing.yaml', largeConfig({ records, services: 5 }));
  return compileSnapshot<Config>({
    file: 'sharing.yaml',
    config,
    capabilities: CAPABILITIES,
    state: { geo: emptyLocationDb(), health: dcsDown(), metrics: emptyMetricView },
    nowMs: 1_700_000_000_000,
  });
};

const recordsOf = (snap: ReturnType<typeof snapshotOf>, names: readonly string[]): CompiledGslbRecord[] =>
  names.map((n) => snap.zones.nodeOf(n)!.node.gslb.get('A')!);

test('records of one service share their compiled endpoints; their candidates stay their own', (t) => {
  const snap = snapshotOf(20);
  // r0, r5 and r10 answer from svc0; r1 from svc1.
  const [a, b, c, other] = recordsOf(snap, ['r0.big.test', 'r5.big.test', 'r10.big.test', 'r1.big.test']);
  for (let i = 0; i < 3; i++) {
    t.is(a!.candidates[i]!.endpoints[0], b!.candidates[i]!.endpoints[0]);
    t.is(a!.candidates[i]!.endpoints[0], c!.candidates[i]!.endpoints[0]);
    t.not(a!.candidates[i]!.endpoints[0], other!.candidates[i]!.endpoints[0]);
    t.not(a!.candidates[i], b!.candidates[i]);
  }
  // Each candidate's rotation key is still its record's and data center's.
  t.deepEqual(
    b!.candidates.map((cd) => cd.rotationKey),
    ['r5.big.test/A/us-east', 'r5.big.test/A/eu-west', 'r5.big.test/A/ap-northeast'],
  );
});

test('stages that hold nothing of one record, the empty zone maps and the decision-cache arrays are one object for every record', (t) => {
  const snap = snapshotOf(20);
  const [a, b] = recordsOf(snap, ['r0.big.test', 'r1.big.test']);
  for (const slot of ['candidates', 'pick', 'balance'] as const)
    t.is(
      a!.pipeline.find((s) => s.slot === slot),
      b!.pipeline.find((s) => s.slot === slot),
      slot,
    );
  // The health gate holds the record's own health.
  t.not(
    a!.pipeline.find((s) => s.slot === 'gate'),
    b!.pipeline.find((s) => s.slot === 'gate'),
  );
  const node = (n: string) => snap.zones.nodeOf(n)!.node;
  t.is(node('r0.big.test').rrsets, node('r1.big.test').rrsets);
  t.is(node('r0.big.test').rrsets.size, 0);
  const arrays = (r: CompiledGslbRecord) => Object.values(r.decisions as unknown as Record<string, unknown>).filter((v) => ArrayBuffer.isView(v));
  t.is(arrays(a!).length, 4);
  const others = arrays(b!);
  arrays(a!).forEach((v, i) => t.is(v, others[i]!));
  // Answers are unchanged: each record answers from its service in the nearest live data center.
  const ctx = fixedContext();
  t.deepEqual(ask(snap, ctx, 'r0.big.test', '192.0.2.1').data, ['10.0.0.1']);
  t.deepEqual(ask(snap, ctx, 'r1.big.test', '192.0.2.1').data, ['10.0.1.1']);
});
