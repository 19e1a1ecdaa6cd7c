import test from 'ava';
import {
  InProcessStateStore,
  type MapOptions,
  type StateMap,
  type StateStore,
  type StateStream,
  type StoreConnection,
  type StreamOptions,
} from '../../core/contracts/stateStore.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { VOTES_MAP, QuorumDecider } from './quorum.js';
import { systemSchedulerClock } from './scheduler.js';

/**
 * The quorum rule and the grace period, on a store whose connection the test sets (the shared
 * maps are in process here; the real Redis store is exercised by test/e2e/sharedState.timing.test.ts).
 */
class SettableStore implements StateStore {
  readonly node = 'a';
  connectionNow: StoreConnection = { state: 'connected', sinceMs: performance.now() };
  private readonly inner = new InProcessStateStore();
  map<V>(name: string, options?: MapOptions): StateMap<V> {
    return this.inner.map<V>(name, options);
  }
  connection(): StoreConnection {
    return this.connectionNow;
  }
  stream<V>(name: string, options?: StreamOptions): StateStream<V> {
    return this.inner.stream<V>(name, options);
  }
}

const CHECK = 'web@127.0.0.1:80';

function setUp(observers: number, decisions: string[] = []) {
  const store = new SettableStore();
  const q = new QuorumDecider(store, systemSchedulerClock, (status, basis) => decisions.push(`${status}/${basis}`));
  q.configure({ observers, voteTtlMs: 60_000, graceMs: 300 });
  const votes = store.map<{ status: string; sinceMs: number; node: string }>(VOTES_MAP);
  const vote = (node: string, status: 'up' | 'down') => votes.set(`${CHECK}|${node}`, { status, sinceMs: 1, node });
  return { store, q, vote };
}

test('down only when k of the live voters see it down; fewer live voters than k: all of them', (t) => {
  const { q, vote } = setUp(2);
  q.local.set(CHECK, { status: 'down', sinceMs: 1 });
  vote('b', 'up');
  vote('c', 'up');
  t.is(q.decided.get(CHECK)?.status, 'up', '1 of 3 down: up');
  vote('b', 'down');
  t.is(q.decided.get(CHECK)?.status, 'down', '2 of 3 down: down');
  const { q: alone } = setUp(2);
  alone.local.set(CHECK, { status: 'down', sinceMs: 1 });
  t.is(alone.decided.get(CHECK)?.status, 'down', 'the only live voter decides');
});

test('store unreachable: the last votes decide during the grace period, then this node alone', async (t) => {
  const { store, q, vote } = setUp(2);
  q.start();
  try {
    q.local.set(CHECK, { status: 'down', sinceMs: 1 });
    vote('b', 'up');
    vote('c', 'up');
    store.connectionNow = { state: 'disconnected', sinceMs: performance.now() };
    t.is(q.decided.get(CHECK)?.status, 'up', 'within the grace period the last votes still decide');
    await waitFor('this node decides alone after the grace period', () => q.decided.get(CHECK)?.status === 'down', 60_000);
    t.true(q.decidingAlone);
    store.connectionNow = { state: 'connected', sinceMs: performance.now() };
    await waitFor('the quorum decides again once connected', () => q.decided.get(CHECK)?.status === 'up', 60_000);
  } finally {
    q.stop();
  }
});

test('each change of a decided status is reported with its basis: quorum, the last votes within the grace period, alone after it', async (t) => {
  const decisions: string[] = [];
  const { store, q, vote } = setUp(2, decisions);
  q.start();
  try {
    q.local.set(CHECK, { status: 'down', sinceMs: 1 });
    vote('b', 'up');
    vote('c', 'up');
    t.deepEqual(decisions, ['down/quorum', 'up/quorum'], 'alone at first (the only voter), then outvoted');
    t.is(q.outvoted(), 1, 'this node sees the check down, the quorum keeps it up');
    vote('c', 'down');
    store.connectionNow = { state: 'disconnected', sinceMs: performance.now() };
    q.local.set(CHECK, { status: 'up', sinceMs: 2 });
    await waitFor('this node decides alone after the grace period', () => q.decidingAlone, 60_000);
    q.local.set(CHECK, { status: 'down', sinceMs: 3 });
    t.deepEqual(decisions, ['down/quorum', 'up/quorum', 'down/quorum', 'up/last-votes', 'down/alone']);
    t.is(q.outvoted(), 0);
  } finally {
    q.stop();
  }
});
