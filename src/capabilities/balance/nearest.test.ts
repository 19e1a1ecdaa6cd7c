import test from 'ava';
import { balanceConfig, tally } from '../../../test/support/balanceConfig.js';
import { SelectionHarness, tinyLocationDb } from '../../../test/support/selectionHarness.js';

const WWW = 'www.example.test';
// Frankfurt, New York, Tokyo; one endpoint without coordinates (takes its DC's: lat 50, lon 8).
const SPREAD = `{ dc: a, address: 192.0.2.1, lat: 50.1, lon: 8.7 }
{ dc: a, address: 192.0.2.2, lat: 40.7, lon: -74.0 }
{ dc: a, address: 192.0.2.3, lat: 35.7, lon: 139.7 }`;
const geo = tinyLocationDb([
  ['198.51.100.0/24', 'NA.US', 40.0, -75.0],
  ['203.0.113.0/25', 'AS.JP', 34.7, 135.5],
  ['192.0.2.0/24', 'EU.DE', 52.5, 13.4],
]);

test('the nearest endpoint to the client location answers, with the location block as scope', (t) => {
  const h = new SelectionHarness(balanceConfig('nearest', SPREAD), { geo });
  const us = h.query(WWW, 'A', '198.51.100.0/24');
  t.deepEqual([us.answers.map((r) => r.data), us.scope], [['192.0.2.2'], 24]);
  const jp = h.query(WWW, 'A', '203.0.113.9');
  t.deepEqual([jp.answers.map((r) => r.data), jp.scope], [['192.0.2.3'], 25]);
  t.deepEqual(h.answer(WWW, 'A', '192.0.2.200'), ['192.0.2.1']);
});

test('an endpoint without coordinates takes its DC coordinates', (t) => {
  const h = new SelectionHarness(balanceConfig('nearest', '{ dc: a, address: 192.0.2.1 }\n{ dc: a, address: 192.0.2.2, lat: 40.7, lon: -74.0 }'), { geo });
  t.deepEqual(h.answer(WWW, 'A', '192.0.2.200'), ['192.0.2.1'], 'Berlin is nearer to the DC (50, 8) than to New York');
});

test('an unknown client location shares the answers by round-robin', (t) => {
  const h = new SelectionHarness(balanceConfig('nearest', SPREAD), { geo });
  const counts = tally(30, () => h.answer(WWW, 'A', '100.64.0.1'));
  t.deepEqual([...counts.values()], [10, 10, 10]);
});

test('endpoints at one place: round-robin without consulting the location (scope 0)', (t) => {
  const h = new SelectionHarness(balanceConfig('nearest', '{ dc: a, address: 192.0.2.1 }\n{ dc: a, address: 192.0.2.2 }'), { geo });
  const seq = Array.from({ length: 4 }, () => {
    const a = h.query(WWW, 'A', '198.51.100.0/24');
    t.is(a.scope, 0);
    return a.answers[0]!.data;
  });
  t.deepEqual(seq, ['192.0.2.1', '192.0.2.2', '192.0.2.1', '192.0.2.2']);
});

test('endpoints tied for nearest share by round-robin', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'nearest',
      '{ dc: a, address: 192.0.2.1, lat: 40.7, lon: -74.0 }\n{ dc: a, address: 192.0.2.2, lat: 40.7, lon: -74.0 }\n{ dc: a, address: 192.0.2.3, lat: 35.7, lon: 139.7 }',
    ),
    { geo },
  );
  const counts = tally(10, () => h.answer(WWW, 'A', '198.51.100.1'));
  t.deepEqual(Object.fromEntries(counts), { '192.0.2.1': 5, '192.0.2.2': 5 });
});
