import test from 'ava';
import { balanceConfig, tally } from '../../../test/support/balanceConfig.js';
import { SelectionHarness } from '../../../test/support/selectionHarness.js';

const PRIO_TIES = `
{ dc: a, address: 192.0.2.1, priority: 1 }
{ dc: a, address: 192.0.2.2, priority: 1 }
{ dc: a, address: 192.0.2.3, priority: 2 }`;
const WWW = 'www.example.test';
const network = (i: number): string => `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.0/24`;

test('top-1 with e1 prio 1, e2 prio 1, e3 prio 2: one of e1/e2, 50% ± 3% over 10,000 client networks, stable per network', (t) => {
  const h = new SelectionHarness(balanceConfig('top-1', PRIO_TIES));
  const counts = tally(10_000, (i) => {
    const a = h.query(WWW, 'A', network(i));
    t.is(a.answers.length, 1);
    if (i % 500 === 0) {
      t.is(a.scope, 24, 'a tie split by the hash depends on the client network');
      t.deepEqual(h.answer(WWW, 'A', network(i)), [a.answers[0]!.data as string], 'same network, same endpoint');
    }
    return [a.answers[0]!.data as string];
  });
  t.is(counts.get('192.0.2.3'), undefined, 'e3 (priority 2) never answers');
  for (const e of ['192.0.2.1', '192.0.2.2']) {
    const share = counts.get(e)! / 10_000;
    t.true(share >= 0.47 && share <= 0.53, `${e}: ${share}`);
  }
});

test('top-2 returns e1 and e2 together, without consulting the client', (t) => {
  const h = new SelectionHarness(balanceConfig('top-2', PRIO_TIES));
  for (let i = 0; i < 20; i++) {
    const a = h.query(WWW, 'A', network(i));
    t.deepEqual(
      a.answers.map((r) => r.data),
      ['192.0.2.1', '192.0.2.2'],
    );
    t.is(a.scope, 0);
  }
});

test('top-3 with three endpoints returns all of them in priority order; top-3 with two returns two', (t) => {
  t.deepEqual(new SelectionHarness(balanceConfig('top-3', PRIO_TIES)).answer(WWW, 'A', '192.0.2.77'), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  const two = new SelectionHarness(balanceConfig('top-3', '{ dc: a, address: 192.0.2.1 }\n{ dc: a, address: 192.0.2.2 }'));
  t.deepEqual(two.answer(WWW, 'A', '192.0.2.77'), ['192.0.2.1', '192.0.2.2']);
});

test('priority first, then the higher weight: no tie, no hash, scope 0', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'top-2',
      `{ dc: a, address: 192.0.2.1, priority: 2, weight: 100 }
       { dc: a, address: 192.0.2.2, priority: 1, weight: 1 }
       { dc: a, address: 192.0.2.3, priority: 1, weight: 5 }`,
    ),
  );
  const a = h.query(WWW, 'A', '198.51.100.0/24');
  t.deepEqual(
    a.answers.map((r) => r.data),
    ['192.0.2.3', '192.0.2.2'],
  );
  t.is(a.scope, 0);
});

test('top-2 with a tie group of three straddling the cut keeps the one above it and hashes the rest', (t) => {
  const h = new SelectionHarness(
    balanceConfig(
      'top-2',
      `{ dc: a, address: 192.0.2.1, priority: 1 }
       { dc: a, address: 192.0.2.2, priority: 2 }
       { dc: a, address: 192.0.2.3, priority: 2 }
       { dc: a, address: 192.0.2.4, priority: 2 }`,
    ),
  );
  const second = tally(3000, (i) => {
    const a = h.answer(WWW, 'A', network(i));
    t.is(a[0], '192.0.2.1');
    t.is(a.length, 2);
    return [a[1]!];
  });
  t.deepEqual([...second.keys()].sort(), ['192.0.2.2', '192.0.2.3', '192.0.2.4']);
  for (const n of second.values()) t.true(n > 850 && n < 1150, `${n}`);
});
