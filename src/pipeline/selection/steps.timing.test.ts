import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runInSlices, type Steps } from './steps.js';

/**
 * Issue 17: PowerDNS keeps one request outstanding per remote-backend connection, so a slicer
 * that gives the event loop one turn between slices answers one request per connection per
 * slice. Here a lock-step peer on a Unix socket (in this process: a round trip is two turns)
 * runs while `runInSlices` works through slices of one busy step each. The assertion counts
 * round trips per pause; it needs only that a round trip fits in a 1 ms pause (tens of
 * microseconds on loopback), hence the timing pass.
 */

/** `count` steps of `busyMs` each: with a slice of 1 ms, every step is a slice. */
function* busySteps(count: number, busyMs: number): Steps<number> {
  for (let i = 0; i < count; i++) {
    const until = performance.now() + busyMs;
    while (performance.now() < until);
    yield;
  }
  return count;
}

test('a lock-step peer gets more than one round trip per pause between slices', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'slices-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'peer.sock');
  let answered = 0;
  const server = createServer((conn) => {
    // The peer's end at teardown may reset the connection.
    conn.on('error', () => conn.destroy());
    conn.on('data', (chunk) => {
      // One request line at a time: the peer sends the next only after this reply.
      answered += chunk.toString().split('\n').length - 1;
      conn.write('ok\n');
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  const peer = createConnection(path);
  let running = true;
  peer.on('error', () => peer.destroy());
  peer.on('data', () => running && peer.write('lookup\n'));
  await new Promise<void>((r) => peer.once('connect', r));
  peer.write('lookup\n');
  t.teardown(() => {
    running = false;
    peer.destroy();
    server.close();
  });
  // Warm up: the peer is in lock step before the slices start.
  while (answered < 10) await new Promise((r) => setTimeout(r, 1));

  const slices = 60;
  const before = answered;
  t.is(await runInSlices(busySteps(slices, 2), 1), slices);
  const during = answered - before;
  const pauses = slices - 1;
  // One event-loop turn per pause allows at most one half round trip per pause (ceil(pauses / 2) + 1 in all).
  t.true(during > pauses, `${during} round trips in ${pauses} pauses`);
  t.log(`${during} round trips in ${pauses} pauses`);
});

test('while other work waits, the pauses between slices are two slices long: the slices take at most a third of the time', async (t) => {
  // Other work: half a millisecond of every millisecond, as queries under load would take.
  const other = setInterval(() => {
    const until = performance.now() + 0.5;
    while (performance.now() < until);
  }, 1);
  t.teardown(() => clearInterval(other));
  const starts: number[] = [];
  const ends: number[] = [];
  function* recorded(): Steps<number> {
    for (let i = 0; i < 30; i++) {
      starts.push(performance.now());
      const until = performance.now() + 4;
      while (performance.now() < until);
      ends.push(performance.now());
      yield;
    }
    return 30;
  }
  t.is(await runInSlices(recorded(), 4), 30);
  // Each step is one slice; every pause follows a busy one but the first.
  const pauses = starts.slice(2).map((s, i) => s - ends[i + 1]!);
  // Timers fire up to a millisecond early (libuv counts whole milliseconds), never earlier.
  const shortest = Math.min(...pauses);
  t.log(`shortest pause ${shortest.toFixed(2)} ms`);
  t.true(shortest >= 2 * 4 - 1, `shortest pause ${shortest.toFixed(2)} ms (pauses: ${pauses.map((p) => p.toFixed(1)).join(', ')})`);
});
