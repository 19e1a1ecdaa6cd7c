import test from 'ava';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeUnixSocket, inheritedUnixSocket, listenUnixSocket, releaseUnixSocket } from './unixSocket.js';

/**
 * Finding the socket systemd passed for a path (socket activation, sd_listen_fds(3)) among real
 * descriptors of this process: the listening sockets the test binds stand for the ones systemd
 * would pass. The engine process taking one over is test/e2e/powerdnsSocketActivation.timing.test.ts.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-unix-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function listen(path: string): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(path, () => resolve(s));
  });
}

// The test's sockets get descriptors somewhere above 3; a count of 200 covers them, as systemd's
// LISTEN_FDS covers the sockets it passes.
const activation = (pid = process.pid): NodeJS.ProcessEnv => ({ LISTEN_PID: String(pid), LISTEN_FDS: '200' });

test('the listening socket bound to the path, among the passed descriptors', async (t) => {
  const [a, b] = [join(dir, 'a.sock'), join(dir, 'b.sock')];
  const servers = [await listen(a), await listen(b)];
  t.teardown(() => servers.forEach((s) => s.close()));
  const fdA = inheritedUnixSocket(a, activation());
  const fdB = inheritedUnixSocket(b, activation());
  t.true(fdA !== undefined && fdB !== undefined && fdA !== fdB, `${fdA} ${fdB}`);
  t.is(inheritedUnixSocket(join(dir, 'other.sock'), activation()), undefined, 'no socket bound to that path: gslbd binds it itself');
});

test('no activation: LISTEN_PID of another process, or no LISTEN_FDS', async (t) => {
  const path = join(dir, 'c.sock');
  const server = await listen(path);
  t.teardown(() => server.close());
  t.is(inheritedUnixSocket(path, activation(process.pid + 1)), undefined, 'the variables were meant for another process');
  t.is(inheritedUnixSocket(path, { LISTEN_PID: String(process.pid) }), undefined);
  t.is(inheritedUnixSocket(path, { LISTEN_PID: String(process.pid), LISTEN_FDS: '0' }), undefined);
  t.is(inheritedUnixSocket(path, {}), undefined);
});

test('a socket handed over to a replacement process keeps its file when this process lets go; a normal stop removes it', async (t) => {
  const sub = mkdtempSync(join(dir, 'handover-'));
  const path = join(sub, 'door.sock');
  const handed = await listenUnixSocket('test', path, '0660', () => undefined);
  t.is(lstatSync(path).mode & 0o777, 0o660, 'mode set before the socket appears at its path');
  t.deepEqual(readdirSync(sub), ['door.sock'], 'bound under a temporary name, renamed onto the path');
  // Node removes the path a socket was bound to when its server closes: bound under another name, the path survives.
  releaseUnixSocket(handed);
  await new Promise((r) => setTimeout(r, 50));
  t.true(lstatSync(path).isSocket(), 'the file stays for the replacement listening on the same socket');
  rmSync(path);
  const stopped = await listenUnixSocket('test', path, '0660', () => undefined);
  await closeUnixSocket(stopped, path);
  t.false(existsSync(path), 'a normal stop removes the file');
});
