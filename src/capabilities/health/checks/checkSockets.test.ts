import test from 'ava';
import { connect, createServer, type Socket } from 'node:net';
import { CheckSockets, resetCheckConnection, type ConnectionEvents } from './checkSockets.js';

const closed = (s: Socket): Promise<void> => new Promise((r) => s.once('close', () => r()));
const ended = (s: Socket): Promise<void> => new Promise((r) => s.once('end', () => r()));

/** Records what one connection reported. */
function recorder(): { events: ConnectionEvents; log: string[] } {
  const log: string[] = [];
  return {
    log,
    events: {
      connected: () => log.push('connected'),
      data: (chunk) => log.push(`data ${chunk.toString('latin1')}`),
      ended: () => log.push('ended'),
      failed: (code) => log.push(`failed ${code}`),
    },
  };
}

test('each connect is a new TCP connection on a reused socket; events go to the current connection only', async (t) => {
  const accepted: Socket[] = [];
  const server = createServer((c) => {
    accepted.push(c);
    c.end(`hello ${accepted.length}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const pool = new CheckSockets(4);

  const first = recorder();
  const a = pool.connect('127.0.0.1', port, first.events);
  await ended(a.socket);
  a.socket.destroy();
  await closed(a.socket);
  t.deepEqual(first.log, ['connected', 'data hello 1', 'ended']);
  t.is(pool.idleCount, 1);

  const second = recorder();
  const b = pool.connect('127.0.0.1', port, second.events);
  t.is(b.socket, a.socket, 'the closed socket object is reused');
  t.is(pool.idleCount, 0);
  await ended(b.socket);
  b.socket.destroy();
  await closed(b.socket);
  t.deepEqual(second.log, ['connected', 'data hello 2', 'ended']);
  t.deepEqual(first.log, ['connected', 'data hello 1', 'ended'], 'the first connection saw nothing of the second');
  t.is(accepted.length, 2, 'two connections reached the server');

  await new Promise<void>((r) => server.close(() => r()));
  const refused = recorder();
  const c = pool.connect('127.0.0.1', port, refused.events);
  t.is(c.socket, a.socket);
  await closed(c.socket);
  t.deepEqual(refused.log, ['failed ECONNREFUSED']);
  t.is(pool.idleCount, 1, 'a failed connection returns its socket too');
});

test('at most maxIdle closed sockets are kept', async (t) => {
  const server = createServer((c) => c.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const pool = new CheckSockets(2);
  const open = Array.from({ length: 5 }, () => pool.connect('127.0.0.1', port, recorder().events));
  await Promise.all(open.map((c) => closed(c.socket)));
  t.is(pool.idleCount, 2);
  await new Promise<void>((r) => server.close(() => r()));
});

test('a connection still connecting is destroyed at once (not reset after its handshake); an established one is reset', async (t) => {
  const endings: string[] = [];
  const server = createServer((c) => {
    c.on('end', () => endings.push('end'));
    c.on('error', (e: NodeJS.ErrnoException) => endings.push(e.code ?? e.message));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const connecting = connect({ host: '127.0.0.1', port });
  t.true(connecting.connecting);
  resetCheckConnection(connecting);
  t.true(connecting.destroyed, 'destroyed without waiting for the handshake');
  await closed(connecting);
  await new Promise((r) => setTimeout(r, 100));
  endings.length = 0;

  const established = connect({ host: '127.0.0.1', port });
  await new Promise((r) => established.once('connect', r));
  resetCheckConnection(established);
  resetCheckConnection(established);
  await closed(established);
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(endings, ['ECONNRESET'], 'the server saw a reset, not a FIN');
  await new Promise<void>((r) => server.close(() => r()));
});
