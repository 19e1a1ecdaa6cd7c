import test from 'ava';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { chiSquare } from '../../../test/support/selectionHarness.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';

/**
 * Weights between data centers (`dcWeights`): "70 % fra1 / 30 % iad1" as gdnsd `weighted`,
 * PowerDNS LUA `pickwrandom` and Cloudflare pool weights express it. When more data centers tie
 * at the pickDcCount cut than fit, the answer's are drawn by weighted random without replacement;
 * every query draws afresh (never a cached draw); the ECS scope is the ranking's.
 */

const config = (weights: string, pickDcCount = 1) => `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters:
  - { name: fra1, location: EU.DE }
  - { name: iad1, location: NA.US }
  - { name: sin1, location: AS.SG }
services:
  - name: web
    endpoints:
      - { dc: fra1, address: 192.0.2.1 }
      - { dc: iad1, address: 192.0.2.2 }
      - { dc: sin1, address: 192.0.2.3 }
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: static-proximity, pickDcCount: ${pickDcCount}, default: [fra1, iad1, sin1] }
    dcWeights: ${weights}
`;

/** How often each data center is answered over `n` queries, in the order fra1, iad1, sin1. */
function split(yaml: string, n: number, health = dcsDown()): number[] {
  const snap = snapshotOf(yaml, undefined, health);
  const ctx = fixedContext(7);
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    for (const dc of ask(snap, ctx, 'www.example.test', '198.51.100.7/32').dcs) counts.set(dc, (counts.get(dc) ?? 0) + 1);
  }
  return ['fra1', 'iad1', 'sin1'].map((dc) => counts.get(dc) ?? 0);
}

test('a 70/30 split over 100,000 queries passes a chi-square test (df 1, p = 0.001)', (t) => {
  const observed = split(config('{ fra1: 70, iad1: 30, sin1: 0 }'), 100_000);
  t.is(observed[2], 0, 'a weight of 0 is not drawn while positive weights can fill the answer');
  const x2 = chiSquare(observed.slice(0, 2), [0.7, 0.3]);
  t.true(x2 < 10.83, `chi-square ${x2.toFixed(2)} for ${observed.join('/')}`);
});

test('three weights, two picked without replacement: the pairs follow the weights', (t) => {
  // Drawing without replacement from 50/30/20 for two places: P(fra1 answered) = 0.5 + 0.3·(0.5/0.7) + 0.2·(0.5/0.8) = 0.839…
  const n = 50_000;
  const observed = split(config('{ fra1: 50, iad1: 30, sin1: 20 }', 2), n);
  const p = [0.5 + 0.3 * (0.5 / 0.7) + 0.2 * (0.5 / 0.8), 0.3 + 0.5 * (0.3 / 0.5) + 0.2 * (0.3 / 0.8), 0.2 + 0.5 * (0.2 / 0.5) + 0.3 * (0.2 / 0.7)];
  t.is(
    observed.reduce((a, b) => a + b, 0),
    2 * n,
  );
  for (let i = 0; i < 3; i++) {
    const x2 = chiSquare([observed[i]!, n - observed[i]!], [p[i]!, 1 - p[i]!]);
    t.true(x2 < 10.83, `data center ${i}: chi-square ${x2.toFixed(2)}, ${observed[i]} of ${n} against ${(p[i]! * n).toFixed(0)}`);
  }
});

test('a weight of 0 is a last resort: answered when the others are down', (t) => {
  t.deepEqual(split(config('{ fra1: 70, iad1: 30, sin1: 0 }'), 1000, dcsDown('fra1', 'iad1')), [0, 0, 1000]);
});

test('weights of unknown data centers are load errors', (t) => {
  const e = t.throws(() => parseConfigText(config('{ fra1: 70, ams1: 30 }')), { instanceOf: ConfigError });
  t.deepEqual(e.problems, [{ path: 'records[0].dcWeights.ams1', message: 'unknown data center "ams1"', line: 21, col: 34 }]);
});
