import test from 'ava';
import { seededRandom } from '../../../test/support/seededRandom.js';
import { rendezvousOwners } from './rendezvous.js';

/** r-of-n check assignment (rendezvous.ts): spread over the nodes, and minimal movement when a node joins or leaves. */

const random = seededRandom(2121);
const CHECKS = Array.from({ length: 3000 }, (_, i) => `web/dc${i % 7}/10.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${i % 250}@tcp-${i}`);
const NODES = ['ns1', 'ns2', 'ns3', 'ns4', 'ns5'];

function assign(nodes: readonly string[], r: number): Map<string, string[]> {
  return new Map(CHECKS.map((c) => [c, rendezvousOwners(c, nodes, r)]));
}

test('every check gets r distinct owners among the nodes, spread evenly', (t) => {
  const r = 2;
  const owners = assign(NODES, r);
  const load = new Map(NODES.map((n) => [n, 0]));
  for (const o of owners.values()) {
    t.is(new Set(o).size, r);
    for (const n of o) load.set(n, load.get(n)! + 1);
  }
  const expected = (CHECKS.length * r) / NODES.length; // 1,200
  for (const [node, n] of load) t.true(Math.abs(n - expected) < expected * 0.08, `${node} runs ${n} checks (expected ~${expected})`);
  t.log(`checks per node (3,000 checks, r = 2 of 5): ${JSON.stringify(Object.fromEntries(load))}`);
});

test('the same owners whatever the order of the node list (every node computes the same)', (t) => {
  for (const c of CHECKS.slice(0, 200)) t.deepEqual(rendezvousOwners(c, [...NODES].reverse(), 2), rendezvousOwners(c, NODES, 2));
});

test('a node joining takes over ~r/(n+1) of the assignments, one owner each; nothing else moves', (t) => {
  const before = assign(NODES, 2);
  const after = assign([...NODES, 'ns6'], 2);
  let moved = 0;
  for (const c of CHECKS) {
    const lost = before.get(c)!.filter((n) => !after.get(c)!.includes(n));
    const gained = after.get(c)!.filter((n) => !before.get(c)!.includes(n));
    t.true(lost.length <= 1 && lost.length === gained.length);
    if (gained.length === 1) {
      t.is(gained[0], 'ns6', 'only the new node gains checks');
      moved++;
    }
  }
  const expected = (CHECKS.length * 2) / 6; // 1,000
  t.true(Math.abs(moved - expected) < expected * 0.1, `${moved} checks moved (expected ~${expected})`);
});

test('a node leaving hands each of its checks to one other node; the others keep theirs', (t) => {
  const before = assign(NODES, 2);
  const after = assign(
    NODES.filter((n) => n !== 'ns3'),
    2,
  );
  let moved = 0;
  for (const c of CHECKS) {
    const had = before.get(c)!;
    const now = after.get(c)!;
    if (!had.includes('ns3')) t.deepEqual(now, had, 'a check ns3 did not run keeps its owners');
    else {
      t.is(now.filter((n) => !had.includes(n)).length, 1, 'one new owner replaces ns3');
      t.true(
        had.filter((n) => n !== 'ns3').every((n) => now.includes(n)),
        'the other owner stays',
      );
      moved++;
    }
  }
  t.true(Math.abs(moved - 1200) < 100, `${moved} checks had ns3`);
});

test('no more nodes than r: every node runs every check', (t) => {
  t.deepEqual(rendezvousOwners('x', ['b', 'a'], 3), ['a', 'b']);
  t.deepEqual(rendezvousOwners('x', ['a'], 2), ['a']);
});
