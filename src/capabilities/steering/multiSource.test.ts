import test from 'ava';
import { downHealth, SelectionHarness } from '../../../test/support/selectionHarness.js';
import { DC_ADDRESS, multiSourceConfig } from '../../../test/support/multiSourceConfig.js';
import { replaceOnce } from '../../../test/support/replaceOnce.js';
import { TYPE_CODES } from '../../core/dns/records.js';
import type { Client } from '../../core/model/query.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { unaskedContext } from '../../core/views/resolveContext.js';
import { resolve } from '../../pipeline/zones/authoritative.js';

/**
 * Multi-source selection end to end through resolve(): a table of metrics → answer → ECS scope,
 * including the field cases of issue 5 (missing, NaN, stale, at target, outside the margin, a down
 * DC with the best metric, pickDcCount above the healthy count, fail-safe).
 */

const WWW = 'www.example.test';
const CLIENT = '198.51.100.7';
const policy = (fields: string) => `{ type: multi-source, ${fields} }`;

test('host cpu lowest: the least loaded DC answers, scope 0', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest')));
  h.push('host', [
    { dc: 'a', cpu: 70 },
    { dc: 'b', cpu: 20 },
    { dc: 'c', cpu: 45 },
  ]);
  const a = h.query(WWW, 'A', '198.51.100.0/24');
  t.deepEqual(
    a.answers.map((r) => r.data),
    [DC_ADDRESS.b],
  );
  t.is(a.scope, 0, 'host metrics do not depend on the client');
  t.deepEqual(a.dcs, ['b']);
});

test('service healthyBackends highest with pickDcCount 2: the two best DCs in rank order', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: service, metric: healthyBackends, criterion: highest, pickDcCount: 2')));
  h.push('service', [
    { service: 'web', dc: 'a', healthyBackends: 3 },
    { service: 'web', dc: 'b', healthyBackends: 9 },
    { service: 'web', dc: 'c', healthyBackends: 6 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.b, DC_ADDRESS.c]);
});

test('the policy service overrides the record service for service metrics', (t) => {
  const yaml = replaceOnce(
    multiSourceConfig(policy('source: service, service: api, metric: request, criterion: lowest')),
    'services:\n',
    'services:\n  - name: api\n    endpoints: [{ dc: a, address: 192.0.2.100 }]\n',
  );
  const h = new SelectionHarness(yaml);
  h.push('service', [
    { service: 'web', dc: 'a', request: 1 },
    { service: 'api', dc: 'a', request: 900 },
    { service: 'api', dc: 'b', request: 100 },
    { service: 'api', dc: 'c', request: 500 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.b]);
});

test('equals up on host status: every up DC ties, down DCs are ranked out', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: status, criterion: { equals: up }, pickDcCount: 3')));
  h.push('host', [
    { dc: 'a', status: 'up' },
    { dc: 'b', status: 'down' },
    { dc: 'c', status: 'up' },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT).sort(), [DC_ADDRESS.a, DC_ADDRESS.c]);
});

test('a metric exactly at the equals target is chosen; one off the target is not', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: service, metric: connection, criterion: { equals: 5 }')));
  h.push('service', [
    { service: 'web', dc: 'a', connection: 4 },
    { service: 'web', dc: 'b', connection: 6 },
    { service: 'web', dc: 'c', connection: 5 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c]);
});

test('all DCs outside the margin of the best: the best alone wins, the next fill pickDcCount in order', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: { within: 2, prefer: lowest }, pickDcCount: 2')));
  h.push('host', [
    { dc: 'a', cpu: 30 },
    { dc: 'b', cpu: 10 },
    { dc: 'c', cpu: 20 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.b, DC_ADDRESS.c]);
  const steps = h.trace(WWW, 'A', CLIENT);
  const rank = steps.find((s) => s.stage === 'multi-source') as unknown as { groups: string[][] };
  t.deepEqual(rank.groups, [['b'], ['c'], ['a']]);
});

test('within a percentage margin the DCs inside tie and the tie-break hash chooses among them', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: { within: "10%", prefer: lowest }')));
  h.push('host', [
    { dc: 'a', cpu: 50 },
    { dc: 'b', cpu: 54 },
    { dc: 'c', cpu: 56 },
  ]);
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const a = h.query(WWW, 'A', `10.${i}.0.1`);
    t.is(a.answers.length, 1);
    t.is(a.scope, 24, 'the tie-break hash uses the client network');
    seen.add(a.answers[0]!.data as string);
  }
  t.deepEqual([...seen].sort(), [DC_ADDRESS.a, DC_ADDRESS.b], 'c (56 > 55) is outside the margin');
});

test('missing metric with unknown: rank-last ranks that DC after every known one', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, pickDcCount: 3')));
  h.push('host', [
    { dc: 'b', cpu: 50 },
    { dc: 'c', cpu: 40 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c, DC_ADDRESS.b, DC_ADDRESS.a]);
});

test('missing metric with unknown: exclude drops that DC', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, pickDcCount: 3, unknown: exclude')));
  h.push('host', [
    { dc: 'b', cpu: 50 },
    { dc: 'c', cpu: 40 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c, DC_ADDRESS.b]);
});

test('a NaN or negative push is rejected whole and the DC stays unknown', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, unknown: exclude, pickDcCount: 3')));
  h.push('host', [
    { dc: 'b', cpu: 50 },
    { dc: 'c', cpu: 40 },
  ]);
  t.throws(() => h.push('host', [{ dc: 'a', cpu: Number.NaN }]), { message: /samples\[0\]\.cpu.*must be a number from 0 to 100 \(percent\)/ });
  t.throws(
    () =>
      h.push('host', [
        { dc: 'c', cpu: 1 },
        { dc: 'a', cpu: -1 },
      ]),
    { message: /samples\[1\]\.cpu/ },
  );
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c, DC_ADDRESS.b], 'a stays unknown; c kept 40 (the batch with c=1 was rejected whole)');
});

test('a metric older than the staleness limit is unknown; exactly at the limit it still counts', (t) => {
  const h = new SelectionHarness(
    multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, unknown: exclude, pickDcCount: 3'), {
      metrics: '{ host: { intervalSeconds: 10, staleAfterSeconds: 30 } }',
    }),
  );
  h.push('host', [{ dc: 'a', cpu: 10 }]);
  h.nowMs += 20_000;
  h.push('host', [
    { dc: 'b', cpu: 20 },
    { dc: 'c', cpu: 30 },
  ]);
  h.nowMs += 10_000;
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.a, DC_ADDRESS.b, DC_ADDRESS.c], 'a is exactly 30 s old');
  h.nowMs += 1;
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.b, DC_ADDRESS.c], 'a is 30.001 s old: stale, excluded');
  const rank = h.trace(WWW, 'A', CLIENT).find((s) => s.stage === 'multi-source') as unknown as {
    dcs: { dc: string; state: string; ageMs?: number; value?: number }[];
  };
  t.deepEqual(
    rank.dcs.find((d) => d.dc === 'a'),
    { dc: 'a', ageMs: 30_001, state: 'stale', rankGroup: null, note: 'metric unknown: excluded' } as never,
  );
});

test('a down DC with the best metric is never chosen', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest')), { health: downHealth(['web/b/192.0.2.2']) });
  h.push('host', [
    { dc: 'a', cpu: 50 },
    { dc: 'b', cpu: 1 },
    { dc: 'c', cpu: 40 },
  ]);
  for (let i = 0; i < 50; i++) t.deepEqual(h.answer(WWW, 'A', `10.0.${i}.1`), [DC_ADDRESS.c]);
});

test('a DC whose host status is down by the agreement rule is never chosen, even with the best metric', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, gate: "host.status == up"')));
  h.push('host', [
    { dc: 'a', cpu: 50, status: 'up' },
    { dc: 'b', cpu: 1, status: 'up' },
    { dc: 'c', cpu: 40, status: 'up' },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.b]);
  h.store.setMonitorStatus('host', '', 'b', false, h.nowMs);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c], 'the monitor says down, the push says up: down');
  h.store.setMonitorStatus('host', '', 'b', true, h.nowMs);
  h.push('host', [{ dc: 'b', status: 'down' }]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c], 'the push says down, the monitor says up: down');
  h.push('host', [{ dc: 'b', status: 'up' }]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.b], 'both up: up');
});

test('pickDcCount 5 with 2 healthy DCs returns exactly those 2', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, pickDcCount: 5')), {
    health: downHealth(['web/a/192.0.2.1']),
  });
  h.push('host', [
    { dc: 'a', cpu: 1 },
    { dc: 'b', cpu: 20 },
    { dc: 'c', cpu: 10 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', CLIENT), [DC_ADDRESS.c, DC_ADDRESS.b]);
});

test('every DC gated out: the fail-safe list answers', (t) => {
  const h = new SelectionHarness(
    multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, gate: "host.cpu < 90"'), { failsafe: ['203.0.113.99'] }),
  );
  h.push('host', [
    { dc: 'a', cpu: 95 },
    { dc: 'b', cpu: 99 },
    { dc: 'c', cpu: 90 },
  ]);
  const a = h.query(WWW, 'A', CLIENT);
  t.is(a.rcode, 0);
  t.deepEqual(
    a.answers.map((r) => r.data),
    ['203.0.113.99'],
  );
});

test('every DC ranked out and no fail-safe list: every enabled endpoint answers (never NXDOMAIN, never empty)', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: status, criterion: { equals: up }')));
  h.push('host', [
    { dc: 'a', status: 'down' },
    { dc: 'b', status: 'down' },
    { dc: 'c', status: 'down' },
  ]);
  const a = h.query(WWW, 'A', CLIENT);
  t.is(a.rcode, 0);
  t.deepEqual(
    a.answers.map((r) => r.data),
    [DC_ADDRESS.a, DC_ADDRESS.b, DC_ADDRESS.c],
  );
});

test('no metrics at all under exclude: the fail-safe list answers', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, unknown: exclude'), { failsafe: ['203.0.113.99'] }));
  t.deepEqual(h.answer(WWW, 'A', CLIENT), ['203.0.113.99']);
});

test('gate unknown under rank-last: gated-in DCs first, then undecided DCs; exclude drops them', (t) => {
  const config = (unknown: string) =>
    multiSourceConfig(
      policy(`source: service, metric: healthyBackends, criterion: highest, pickDcCount: 3, unknown: ${unknown}, gate: "host.status == up && host.cpu < 90"`),
    );
  for (const unknown of ['rank-last', 'exclude']) {
    const h = new SelectionHarness(config(unknown));
    h.push('host', [
      { dc: 'a', status: 'up' },
      { dc: 'b', status: 'up', cpu: 20 },
      { dc: 'c', status: 'up', cpu: 95 },
    ]);
    h.push('service', [
      { service: 'web', dc: 'a', healthyBackends: 10 },
      { service: 'web', dc: 'b', healthyBackends: 2 },
      { service: 'web', dc: 'c', healthyBackends: 50 },
    ]);
    t.deepEqual(h.answer(WWW, 'A', CLIENT), unknown === 'rank-last' ? [DC_ADDRESS.b, DC_ADDRESS.a] : [DC_ADDRESS.b], unknown);
  }
});

test('client packetLoss: each client network gets its cleanest path and the scope is the client network (/24, /48)', (t) => {
  const h = new SelectionHarness(
    multiSourceConfig(policy('source: client, metric: packetLoss, criterion: lowest'), {
      endpoints:
        '[{ dc: a, address: 192.0.2.1 }, { dc: b, address: 192.0.2.2 }, { dc: c, address: 192.0.2.3 }, { dc: a, address: "2001:db8::1" }, { dc: b, address: "2001:db8::2" }]',
      extraRecords:
        '  - { name: www.example.test, type: AAAA, service: web, policy: { type: multi-source, source: client, metric: packetLoss, criterion: lowest } }',
    }),
  );
  h.push('client', [
    { network: '198.51.100.0/24', dc: 'a', packetLoss: 2 },
    { network: '198.51.100.0/24', dc: 'b', packetLoss: 0.1 },
    { network: '198.51.100.0/24', dc: 'c', packetLoss: 1 },
    { network: '203.0.113.77', dc: 'a', packetLoss: 0 },
    { network: '203.0.113.0', dc: 'b', packetLoss: 5 },
    { network: '2001:db8:aaaa::/48', dc: 'a', packetLoss: 3 },
    { network: '2001:db8:aaaa:1::1', dc: 'b', packetLoss: 0.5 },
  ]);
  const a1 = h.query(WWW, 'A', '198.51.100.200/32');
  t.deepEqual([a1.answers.map((r) => r.data), a1.scope], [[DC_ADDRESS.b], 24]);
  const a2 = h.query(WWW, 'A', '203.0.113.0/24');
  t.deepEqual([a2.answers.map((r) => r.data), a2.scope], [[DC_ADDRESS.a], 24]);
  const a3 = h.query(WWW, 'AAAA', '2001:db8:aaaa:ffff::/64');
  t.deepEqual([a3.answers.map((r) => r.data), a3.scope], [['2001:db8::2'], 48]);
  const unknownNet = h.query(WWW, 'A', '192.0.2.0/24');
  t.is(unknownNet.scope, 24, 'a network without metrics still decided by its (absent) client metrics');
});

test('client network length is configurable: /16 groups more clients under one key and scope', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: client, metric: hops, criterion: lowest'), { metrics: '{ client: { ipv4Prefix: 16 } }' }));
  h.push('client', [
    { network: '198.51.0.0/16', dc: 'a', hops: 9 },
    { network: '198.51.0.0/16', dc: 'c', hops: 4 },
  ]);
  const a = h.query(WWW, 'A', '198.51.77.0/24');
  t.deepEqual([a.answers.map((r) => r.data), a.scope], [[DC_ADDRESS.c], 16]);
});

test('client MOS from latency, jitter and loss: the better path wins', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: client, metric: mos, criterion: highest')));
  h.push('client', [
    { network: '198.51.100.0/24', dc: 'a', latencyMs: 150, jitterMs: 30, packetLoss: 1 },
    { network: '198.51.100.0/24', dc: 'b', latencyMs: 20, jitterMs: 2, packetLoss: 0 },
    { network: '198.51.100.0/24', dc: 'c', mos: 3.9 },
  ]);
  t.deepEqual(h.answer(WWW, 'A', '198.51.100.1'), [DC_ADDRESS.b]);
});

test('tie-break at the pickDcCount cut: stable per client network, even over many networks, scope /24', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest')));
  h.push('host', [
    { dc: 'a', cpu: 10 },
    { dc: 'b', cpu: 10 },
    { dc: 'c', cpu: 80 },
  ]);
  const counts = new Map<string, number>();
  for (let i = 0; i < 10_000; i++) {
    const client = `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.9`;
    const a = h.query(WWW, 'A', client);
    const dc = a.answers[0]!.data as string;
    counts.set(dc, (counts.get(dc) ?? 0) + 1);
    if (i % 1000 === 0) {
      const again = h.query(WWW, 'A', client.replace(/\.9$/, '.200'));
      t.is(again.answers[0]!.data, dc, 'same network, same DC');
      t.is(a.scope, 24);
    }
  }
  t.is(counts.get(DC_ADDRESS.c), undefined);
  const share = counts.get(DC_ADDRESS.a)! / 10_000;
  t.true(share > 0.47 && share < 0.53, `a got ${share}`);
});

test('the tie-break does not depend on process state: a fresh harness gives the same choices', (t) => {
  const pick = () => {
    const h = new SelectionHarness(multiSourceConfig(policy('source: host, metric: cpu, criterion: lowest, pickDcCount: 2')), {
      seed: Math.floor(Math.random() * 1000),
    });
    h.push('host', [
      { dc: 'a', cpu: 10 },
      { dc: 'b', cpu: 10 },
      { dc: 'c', cpu: 10 },
    ]);
    return Array.from({ length: 20 }, (_, i) => h.answer(WWW, 'A', `100.64.${i}.1`).join(','));
  };
  t.deepEqual(pick(), pick());
});

test('/explain shows per DC the metric value, age, gate result, rank group and why it was picked', (t) => {
  const h = new SelectionHarness(
    multiSourceConfig(policy('source: service, metric: healthyBackends, criterion: highest, pickDcCount: 1, gate: "host.cpu < 90"'), {
      failsafe: ['203.0.113.99'],
    }),
  );
  h.push('host', [
    { dc: 'a', cpu: 10 },
    { dc: 'b', cpu: 95 },
    { dc: 'c', cpu: 10 },
  ]);
  h.nowMs += 5000;
  h.push('service', [
    { service: 'web', dc: 'a', healthyBackends: 4 },
    { service: 'web', dc: 'b', healthyBackends: 9 },
    { service: 'web', dc: 'c', healthyBackends: 2 },
  ]);
  const steps = h.trace(WWW, 'A', CLIENT);
  t.deepEqual(
    steps.map((s) => s.stage),
    ['candidates', 'health', 'metric-gate', 'multi-source', 'pick-dcs', 'balance', 'decision-cache'],
  );
  t.deepEqual(steps[6], { stage: 'decision-cache', cacheable: false, reason: 'stage metric-gate: it reads live host and service metrics' });
  const gate = steps[2] as unknown as { dcs: unknown[] };
  t.deepEqual(gate.dcs[1], { dc: 'b', gate: 'fail', outcome: 'gated out', metrics: { 'host.cpu': { value: 95, ageMs: 5000, state: 'fresh' } } });
  const rank = steps[3] as unknown as { dcs: unknown[]; groups: string[][] };
  t.deepEqual(rank.dcs, [
    { dc: 'a', value: 4, ageMs: 0, state: 'fresh', rankGroup: 0, note: 'ranked by value' },
    { dc: 'c', value: 2, ageMs: 0, state: 'fresh', rankGroup: 1, note: 'ranked by value' },
  ]);
  const pick = steps[4] as unknown as { dcs: unknown[] };
  t.deepEqual(pick.dcs, [
    { dc: 'a', rankGroup: 0, picked: true, why: 'rank group within the best 1' },
    { dc: 'c', rankGroup: 1, picked: false, why: 'ranked below the pickDcCount cut' },
  ]);
});

test('client metrics: an answer nobody asked (unaskedContext) notes no client for the agents; a query does', (t) => {
  const h = new SelectionHarness(multiSourceConfig(policy('source: client, metric: packetLoss, criterion: lowest')));
  h.push('client', [
    { network: '198.51.100.0/24', dc: 'a', packetLoss: 2 },
    { network: '198.51.100.0/24', dc: 'b', packetLoss: 0.1 },
  ]);
  // Who notes a client for the agents is what is checked: a recorder of ProbeDemand.note.
  const notes: Client[] = [];
  h.snapshot = { ...h.snapshot, env: { ...h.snapshot.env, probes: { note: (client: Client) => void notes.push(client) } } };
  const q = { name: WWW, type: TYPE_CODES.A, client: { address: parseIp('198.51.100.7'), sourcePrefix: 32, fromEcs: false }, transport: 'udp' as const };
  const unasked = resolve(q, h.snapshot, unaskedContext(h.ctx));
  t.deepEqual([unasked.answers.map((r) => r.data), notes.length], [[DC_ADDRESS.b], 0]);
  const asked = resolve(q, h.snapshot, h.ctx);
  t.deepEqual([asked.answers.map((r) => r.data), notes.length], [[DC_ADDRESS.b], 1]);
});
