import test from 'ava';
import { startRedis, stopAllRedis } from '../../../test/support/redisServer.js';
import { sleep, waitFor } from '../../../test/support/waitFor.js';
import { QuorumDecider, VOTES_MAP } from '../../capabilities/health/quorum.js';
import { systemSchedulerClock, type SchedulerClock } from '../../capabilities/health/scheduler.js';
import { openStateStore, type OpenedStore } from './openStateStore.js';
import { storeSchema } from './storeSchema.js';

/**
 * Quorum decisions while other nodes' votes are late (src/capabilities/health/quorum.ts, "late
 * votes"): three deciders, each on its own store connection to one real redis-server (vote TTL
 * 2 s). Node a's own path is bad (it votes down); b and c vote up, but their event loops are slow:
 * every timer of theirs fires 2.3 s late, so their votes are refreshed every ~3 s and expire in
 * Redis (by Redis `TIME`) between refreshes. Before late votes lingered, a then decided the check
 * down alone each time both expired and up again at their next refresh (the flapping
 * `gslbd_health_quorum_decisions_total` seen under load).
 */

const CHECK = 'web@127.0.0.1:8080';
const TTL_MS = 2000;
const opened: OpenedStore[] = [];
const deciders: QuorumDecider[] = [];

test.after.always(async () => {
  for (const d of deciders) d.stop();
  await Promise.all(opened.map((o) => o.stop()));
  await stopAllRedis();
});

/** A node's clock whose timers all fire `lateMs` late (a starved event loop, as the refresh sees it). */
function slowedClock(lateMs: number): SchedulerClock {
  return { ...systemSchedulerClock, setTimer: (fn, ms) => systemSchedulerClock.setTimer(fn, ms + lateMs) };
}

async function decider(url: string, node: string, clock: SchedulerClock, decisions: string[] = []): Promise<QuorumDecider> {
  const o = openStateStore(storeSchema.parse({ redis: { url, node, namespace: 'late', connectTimeoutSeconds: 5 } }));
  opened.push(o);
  await o.ready();
  const q = new QuorumDecider(o.store, clock, (status, basis) => decisions.push(`${status}/${basis}`));
  deciders.push(q);
  q.configure({ observers: 2, voteTtlMs: TTL_MS, graceMs: 30_000 });
  q.start();
  return q;
}

test('late votes of live nodes do not flip a decision; the votes of nodes gone stop counting after the TTL and the linger', async (t) => {
  const redis = await startRedis();
  const b = await decider(redis.url, 'b', slowedClock(2300));
  const c = await decider(redis.url, 'c', slowedClock(2300));
  b.local.set(CHECK, { status: 'up', sinceMs: 1 });
  c.local.set(CHECK, { status: 'up', sinceMs: 1 });
  const decisions: string[] = [];
  const a = await decider(redis.url, 'a', systemSchedulerClock, decisions);
  a.local.set(CHECK, { status: 'down', sinceMs: 1 });
  await waitFor('a sees b’s and c’s up votes', () => a.decided.get(CHECK)?.status === 'up', 10_000);
  const before = decisions.length;

  // Count how often b's and c's votes leave a's replica (expired in Redis) while a decides.
  const votesOfA = opened[2]!.store.map<unknown>(VOTES_MAP);
  let expired = 0;
  let mostLate = 0;
  votesOfA.watch((key, v) => {
    if (v === undefined && !key.endsWith('|a')) expired++;
    mostLate = Math.max(mostLate, a.lateVoteCount);
  });
  await sleep(10_000);
  t.true(expired >= 2, `b's and c's votes expired between their late refreshes (${expired} expiries seen by a)`);
  t.deepEqual(decisions.slice(before), [], 'a’s decision never left up while b’s and c’s votes were merely late');
  t.true(mostLate >= 1, 'a counted late votes');
  t.is(a.decided.get(CHECK)?.status, 'up');

  // b and c gone (their refreshes stop): a decides alone once their votes expired and lingered.
  b.stop();
  c.stop();
  const started = performance.now();
  await waitFor('a decides down once b’s and c’s votes are gone', () => a.decided.get(CHECK)?.status === 'down', 30_000);
  const goneMs = performance.now() - started;
  t.log(`late refreshes (every ~3 s, TTL 2 s): ${expired} expiries, 0 decision changes; nodes gone → decided without them after ${Math.round(goneMs)} ms`);
  t.true(goneMs >= TTL_MS, 'a vote of a node gone lingers past its TTL');
  t.deepEqual(decisions.slice(before), ['down/quorum']);
});
