import test from 'ava';
import { balanceConfig, tally } from '../../../test/support/balanceConfig.js';
import { chiSquare, downHealth, SelectionHarness } from '../../../test/support/selectionHarness.js';

const WWW = 'www.example.test';
const draws = (h: SelectionHarness, addresses: string[], type: 'A' | 'AAAA' = 'A'): number[] => {
  const counts = tally(10_000, () => h.answer(WWW, type, '198.51.100.1'));
  return addresses.map((a) => counts.get(a) ?? 0);
};

test('weights 1, 2, 7: 10,000 draws (seed 11) follow the weights (chi-square, df 2, < 13.82 at p = 0.001)', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-random',
      '{ dc: a, address: 192.0.2.1, weight: 1 }\n{ dc: a, address: 192.0.2.2, weight: 2 }\n{ dc: a, address: 192.0.2.3, weight: 7 }',
    ),
    { seed: 11 },
  );
  const observed = draws(h, ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  t.true(chiSquare(observed, [0.1, 0.2, 0.7]) < 13.82, `${observed.join()}`);
  t.true(chiSquare(observed, [1 / 3, 1 / 3, 1 / 3]) > 1000, 'and clearly not uniform');
});

test('all weights 0 are treated as equal (chi-square, df 2, < 13.82)', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-random',
      '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 0 }\n{ dc: a, address: 192.0.2.3, weight: 0 }',
    ),
    { seed: 5 },
  );
  const observed = draws(h, ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  t.true(chiSquare(observed, [1 / 3, 1 / 3, 1 / 3]) < 13.82, `${observed.join()}`);
});

test('a weight-0 endpoint among positive ones is never chosen while they are up', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-random',
      '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 1 }\n{ dc: a, address: 192.0.2.3, weight: 3 }',
    ),
    { seed: 9 },
  );
  const observed = draws(h, ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  t.is(observed[0], 0);
  t.true(chiSquare(observed.slice(1), [0.25, 0.75]) < 10.83, `${observed.join()}`);
});

test('all positive-weight endpoints down: the weight-0 endpoint answers', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-random',
      '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 1 }\n{ dc: a, address: 192.0.2.3, weight: 3 }',
    ),
    { health: downHealth(['web/a/192.0.2.2', 'web/a/192.0.2.3']) },
  );
  for (let i = 0; i < 100; i++) t.deepEqual(h.answer(WWW, 'A', '198.51.100.1'), ['192.0.2.1']);
});

test('two A and two AAAA endpoints at 50/50: 1,000 AAAA queries each return one AAAA, spread by weight', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'weighted-random',
      `{ dc: a, address: 192.0.2.1, weight: 50 }
       { dc: a, address: 192.0.2.2, weight: 50 }
       { dc: a, address: "2001:db8::1", weight: 50 }
       { dc: a, address: "2001:db8::2", weight: 50 }`,
    ),
    { seed: 13 },
  );
  const counts = tally(1000, () => {
    const a = h.answer(WWW, 'AAAA', '198.51.100.1');
    t.is(a.length, 1);
    return a;
  });
  t.deepEqual([...counts.keys()].sort(), ['2001:db8::1', '2001:db8::2']);
  t.true(chiSquare([counts.get('2001:db8::1')!, counts.get('2001:db8::2')!], [0.5, 0.5]) < 10.83);
  const a = tally(1000, () => h.answer(WWW, 'A', '198.51.100.1'));
  t.deepEqual([...a.keys()].sort(), ['192.0.2.1', '192.0.2.2']);
});
