import test from 'ava';
import { balanceConfig, tally } from '../../../test/support/balanceConfig.js';
import { chiSquare, SelectionHarness } from '../../../test/support/selectionHarness.js';

const THREE = '{ dc: a, address: 192.0.2.1, weight: 1 }\n{ dc: a, address: 192.0.2.2, weight: 10 }\n{ dc: a, address: 192.0.2.3, weight: 100 }';

test('random: 10,000 draws (seed 7) are uniform over three endpoints whatever their weights (chi-square, df 2, < 13.82 at p = 0.001)', (t) => {
  const h = new SelectionHarness(balanceConfig('random', THREE), { seed: 7 });
  const counts = tally(10_000, () => h.answer('www.example.test', 'A', '198.51.100.1'));
  const observed = ['192.0.2.1', '192.0.2.2', '192.0.2.3'].map((a) => counts.get(a) ?? 0);
  t.is(
    observed.reduce((a, b) => a + b),
    10_000,
    'one endpoint per answer',
  );
  t.true(chiSquare(observed, [1 / 3, 1 / 3, 1 / 3]) < 13.82, `${observed.join()}`);
});

test('random: the answer does not depend on the client (scope 0)', (t) => {
  const h = new SelectionHarness(balanceConfig('random', THREE), { seed: 7 });
  t.is(h.query('www.example.test', 'A', '198.51.100.0/24').scope, 0);
});

test('random: one live endpoint is always the answer', (t) => {
  const h = new SelectionHarness(balanceConfig('random', '{ dc: a, address: 192.0.2.9 }'), { seed: 3 });
  for (let i = 0; i < 50; i++) t.deepEqual(h.answer('www.example.test', 'A', '198.51.100.1'), ['192.0.2.9']);
});
