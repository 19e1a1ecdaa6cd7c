import test from 'ava';
import { TYPE_CODES } from '../core/dns/records.js';
import { presentData } from '../core/dns/presentation.js';
import type { QueryEngine } from '../core/contracts/frontDoor.js';
import type { Answer, Query } from '../core/model/query.js';
import { createLogger } from '../core/telemetry/logger.js';
import { allUpHealthView, endpointsDownView, type HealthView } from '../core/views/healthView.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { Engine } from './engine.js';
import { withHealthView } from './snapshot.js';
import { parseConfigText } from '../process/loadConfig.js';
import { buildSnapshot } from '../process/snapshot.js';
import { clientOf, fixedContext } from '../../test/support/selectionFixture.js';
import { THREE_DATA_CENTERS_CLIENTS } from '../../test/support/threeDataCenters.js';

/**
 * The engine's unasked view (`Engine.unasked`, `QueryEngine.unasked`: what the fast path answers
 * its templates' queries with after a publish) moves no state a query reads: however many unasked
 * answers come between them, real queries get exactly the answers they get without them — for
 * round-robin, smooth weighted round-robin and random balance among several endpoints, and for a
 * tie between data centers split by rotation. And a decision that does not vary moves no state
 * whoever computes it first (`balanceStage.ts`: a pool of one endpoint asks no algorithm), so a
 * real query served from a decision an unasked answer computed leaves the rotation where a real
 * query computing it would have.
 */

const YAML = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
datacenters:
  - { name: eu, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: ap, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: eu, address: 192.0.2.10 }
      - { dc: us, address: 192.0.2.20 }
      - { dc: us, address: 192.0.2.21, weight: 2 }
      - { dc: us, address: 192.0.2.22 }
      - { dc: ap, address: 192.0.2.30 }
records:
  - { name: rr.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us], balanceAlgorithm: round-robin } }
  - { name: wrr.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us], balanceAlgorithm: weighted-round-robin } }
  - { name: random.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us], balanceAlgorithm: random } }
  - { name: tie.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us], balanceAlgorithm: round-robin } }
`;

const NOW = 1_700_000_000_000;
const config = parseConfigText(YAML);
/** A client in the US (10.2.0.0/16 of the three-data-center location table). */
const US_CLIENT = clientOf('10.2.0.1/32');
/** A client the location table does not know: the policy's default (us), else every data center tied. */
const UNLOCATED = clientOf('10.9.0.1/32');

function engine(health: HealthView = allUpHealthView): Engine {
  return new Engine(
    buildSnapshot('gslbd.yaml', config, { geo: THREE_DATA_CENTERS_CLIENTS, health, metrics: emptyMetricView }, NOW),
    fixedContext(),
    createLogger('silent'),
  );
}

function query(name: string): Query {
  return { name, type: TYPE_CODES.A, client: name.startsWith('tie.') ? UNLOCATED : US_CLIENT, transport: 'udp', dnssecOk: false, delegationHop: undefined };
}

function answerOf(e: QueryEngine, name: string): Answer {
  const a = e.resolve(query(name));
  if (a instanceof Promise) throw new Error('an answer of this configuration never waits');
  return a;
}

const dataOf = (a: Answer): string => a.answers.map((r) => presentData(r.type, r.data)).join(' ');

/** `rounds` real answers of `name`, with `unasked` unasked answers before each. */
function realAnswers(e: Engine, name: string, rounds: number, unasked: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < rounds; i++) {
    for (let k = 0; k < unasked; k++) answerOf(e.unasked(), name);
    out.push(dataOf(answerOf(e, name)));
  }
  return out;
}

for (const { name, health, what } of [
  { name: 'rr.example.test', health: allUpHealthView, what: 'round-robin over three endpoints' },
  { name: 'wrr.example.test', health: allUpHealthView, what: 'smooth weighted round-robin over weights 1, 2, 1' },
  { name: 'random.example.test', health: allUpHealthView, what: 'random over three endpoints (the seeded random source)' },
  // us down: eu and ap are tied for a client without location, one is picked by the record's rotation counter.
  {
    name: 'tie.example.test',
    health: endpointsDownView(['web/us/192.0.2.20', 'web/us/192.0.2.21', 'web/us/192.0.2.22']),
    what: 'a tie between data centers split by rotation',
  },
]) {
  test(`unasked answers never move the state real queries read: ${what}`, (t) => {
    const without = realAnswers(engine(health), name, 12, 0);
    const withUnasked = realAnswers(engine(health), name, 12, 5);
    t.deepEqual(withUnasked, without);
    t.true(new Set(without).size > 1, `the answers rotate: ${without.join(', ')}`);
  });
}

test('unasked answers that vary are never reusable, and leave the rotation store as it was', (t) => {
  const e = engine();
  const rotation = e.ctx.rotation.clone();
  for (const name of ['rr.example.test', 'wrr.example.test', 'random.example.test']) {
    for (let k = 0; k < 5; k++) t.is(answerOf(e.unasked(), name).reuseScope, -1, name);
  }
  t.is(e.ctx.rotation.size, rotation.size);
  t.is(e.ctx.rotation.next('rr.example.test'), rotation.next('rr.example.test'));
});

test('a reusable decision moves no rotation whoever computes it first: an unasked answer or a query', (t) => {
  const oneLeft = endpointsDownView(['web/us/192.0.2.21', 'web/us/192.0.2.22']);
  const byQuery = engine(oneLeft);
  const byUnasked = engine(oneLeft);
  // The fast path's order: the unasked answer computes the decision, the query is served from it (natively, or here from the decision cache).
  const unasked = answerOf(byUnasked.unasked(), 'rr.example.test');
  const served = answerOf(byUnasked, 'rr.example.test');
  // The Node listener's order: the query computes it.
  const computed = answerOf(byQuery, 'rr.example.test');
  t.true((unasked.reuseScope ?? -1) >= 0);
  t.deepEqual([dataOf(unasked), unasked.reuseScope], [dataOf(computed), computed.reuseScope]);
  t.is(dataOf(served), dataOf(computed));
  // The other endpoints come back: both rotate from the same counter.
  for (const e of [byQuery, byUnasked]) e.publish(withHealthView(e.snapshot, allUpHealthView));
  const after = (e: Engine) => Array.from({ length: 6 }, () => dataOf(answerOf(e, 'rr.example.test')));
  t.deepEqual(after(byUnasked), after(byQuery));
});
