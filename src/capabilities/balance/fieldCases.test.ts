import test from 'ava';
import { presentData } from '../../core/dns/presentation.js';
import { balanceConfig, tally } from '../../../test/support/balanceConfig.js';
import { downHealth, SelectionHarness } from '../../../test/support/selectionHarness.js';

/** Field cases seen in other GSLB engines (issue 5) that cross several algorithms. */

const WWW = 'www.example.test';
const EQUAL3 = '{ dc: a, address: 192.0.2.1 }\n{ dc: a, address: 192.0.2.2 }\n{ dc: a, address: 192.0.2.3 }';

test('round-robin over three equal members answers each exactly 10 times in 30 queries (the index is written back)', (t) => {
  const h = new SelectionHarness(balanceConfig('round-robin', EQUAL3));
  const seq = Array.from({ length: 30 }, () => h.answer(WWW, 'A', '198.51.100.1')[0]!.slice(-1)).join('');
  t.is(seq, '123'.repeat(10));
});

test('weight 0 under every algorithm: never answered while a positive-weight endpoint is up', (t) => {
  const endpoints = '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 2 }\n{ dc: a, address: 192.0.2.3, weight: 1 }';
  for (const algorithm of ['all', 'round-robin', 'top-1', 'top-2', 'top-3', 'weighted-round-robin', 'random', 'weighted-random', 'nearest']) {
    const h = new SelectionHarness(balanceConfig(algorithm, endpoints), { seed: 21 });
    const counts = tally(300, (i) => h.answer(WWW, 'A', `10.${i >> 8}.${i & 255}.1`));
    t.is(counts.get('192.0.2.1'), undefined, algorithm);
    t.true((counts.get('192.0.2.2') ?? 0) > 0, algorithm);
  }
});

test('weight 0 under every algorithm: answered when every positive-weight endpoint is down', (t) => {
  const endpoints = '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 2 }\n{ dc: a, address: 192.0.2.3, weight: 1 }';
  for (const algorithm of ['all', 'round-robin', 'top-1', 'weighted-round-robin', 'random', 'weighted-random', 'nearest']) {
    const h = new SelectionHarness(balanceConfig(algorithm, endpoints), { health: downHealth(['web/a/192.0.2.2', 'web/a/192.0.2.3']) });
    t.deepEqual(h.answer(WWW, 'A', '198.51.100.1'), ['192.0.2.1'], algorithm);
  }
});

test('all weights 0 under every algorithm: treated as equal, every endpoint answers', (t) => {
  const endpoints = '{ dc: a, address: 192.0.2.1, weight: 0 }\n{ dc: a, address: 192.0.2.2, weight: 0 }\n{ dc: a, address: 192.0.2.3, weight: 0 }';
  for (const algorithm of ['round-robin', 'weighted-round-robin', 'random', 'weighted-random', 'nearest']) {
    const h = new SelectionHarness(balanceConfig(algorithm, endpoints), { seed: 4 });
    const counts = tally(300, () => h.answer(WWW, 'A', '198.51.100.1'));
    t.deepEqual([...counts.keys()].sort(), ['192.0.2.1', '192.0.2.2', '192.0.2.3'], algorithm);
  }
});

test('every algorithm answers an AAAA query with AAAA data only, never empty', (t) => {
  const endpoints = `{ dc: a, address: 192.0.2.1, weight: 50 }
    { dc: a, address: 192.0.2.2, weight: 50 }
    { dc: a, address: "2001:db8::1", weight: 50 }
    { dc: a, address: "2001:db8::2", weight: 50 }`;
  for (const algorithm of ['all', 'round-robin', 'top-1', 'top-2', 'top-3', 'weighted-round-robin', 'random', 'weighted-random', 'nearest']) {
    const h = new SelectionHarness(balanceConfig(algorithm, endpoints), { seed: 8 });
    for (let i = 0; i < 50; i++) {
      const a = h.answer(WWW, 'AAAA', `10.0.${i}.1`);
      t.true(a.length >= 1 && a.every((x) => x.startsWith('2001:db8::')), `${algorithm}: ${a.join()}`);
    }
  }
});

test('negative or non-numeric weights are configuration errors', (t) => {
  t.throws(() => new SelectionHarness(balanceConfig('weighted-random', '{ dc: a, address: 192.0.2.1, weight: -1 }')), {
    message: /services\[0\]\.endpoints\[0\]\.weight: Too small/,
  });
  t.throws(() => new SelectionHarness(balanceConfig('weighted-random', '{ dc: a, address: 192.0.2.1, weight: heavy }')), {
    message: /services\[0\]\.endpoints\[0\]\.weight: .*expected number/,
  });
});

test('one-endpoint algorithms answer alike with and without /explain (pick and pickOne take the same draws and rotation steps)', (t) => {
  const endpoints = '{ dc: a, address: 192.0.2.1, weight: 1 }\n{ dc: a, address: 192.0.2.2, weight: 2 }\n{ dc: a, address: 192.0.2.3, weight: 5 }';
  for (const algorithm of ['round-robin', 'random', 'weighted-random', 'nearest']) {
    const plain = new SelectionHarness(balanceConfig(algorithm, endpoints), { seed: 17 });
    const explained = new SelectionHarness(balanceConfig(algorithm, endpoints), { seed: 17 });
    const seq = (h: SelectionHarness, explain: boolean): string =>
      Array.from({ length: 60 }, () =>
        h
          .query(WWW, 'A', '198.51.100.1', explain ? [] : undefined)
          .answers.map((r) => presentData(r.type, r.data).slice(-1))
          .join(),
      ).join('');
    const answers = seq(plain, false);
    t.is(seq(explained, true), answers, algorithm);
    t.is(new Set(answers).size, 3, `${algorithm}: ${answers}`);
  }
});
