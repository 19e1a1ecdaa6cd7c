import test from 'ava';
import { balanceConfig } from '../../../test/support/balanceConfig.js';
import { downHealth, SelectionHarness } from '../../../test/support/selectionHarness.js';

const WWW = 'www.example.test';
const sequence = (h: SelectionHarness, n: number): string => Array.from({ length: n }, () => h.answer(WWW, 'A', '198.51.100.1')[0]!.slice(-1)).join('');

test('smooth sequence for weights 5, 1, 1 over 30 queries: interleaved, nginx order', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-round-robin',
      `{ dc: a, address: 192.0.2.1, weight: 5 }
       { dc: a, address: 192.0.2.2, weight: 1 }
       { dc: a, address: 192.0.2.3, weight: 1 }`,
    ),
  );
  // One period is "1121311" (a a b a c a a); 30 queries = four periods and two more.
  t.is(sequence(h, 30), '112131111213111121311112131111');
});

test('smooth sequence for weights 3, 2 and equal weights', (t) => {
  const h = new SelectionHarness(balanceConfig('weighted-round-robin', '{ dc: a, address: 192.0.2.1, weight: 3 }\n{ dc: a, address: 192.0.2.2, weight: 2 }'));
  t.is(sequence(h, 30), '12121'.repeat(6));
  const eq = new SelectionHarness(
    balanceConfig('weighted-round-robin', '{ dc: a, address: 192.0.2.1 }\n{ dc: a, address: 192.0.2.2 }\n{ dc: a, address: 192.0.2.3 }'),
  );
  t.is(sequence(eq, 30), '123'.repeat(10));
});

test('all weights 0 count as equal', (t) => {
  const h = new SelectionHarness(balanceConfig('weighted-round-robin', '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 0 }'));
  t.is(sequence(h, 6), '121212');
});

test('the sequence restarts over the survivors when an endpoint goes down, and continues its state otherwise', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-round-robin',
      `{ dc: a, address: 192.0.2.1, weight: 2 }
       { dc: a, address: 192.0.2.2, weight: 1 }
       { dc: a, address: 192.0.2.3, weight: 1 }`,
    ),
  );
  t.is(sequence(h, 4), '1231');
  h.setHealth(downHealth(['web/a/192.0.2.2']));
  t.is(sequence(h, 6), '131131');
});
