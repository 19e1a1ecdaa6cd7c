import test from 'ava';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { StreamConnection } from './streamConnection.js';

/** A connected pair over loopback TCP: the server's end and the client's end. */
async function pair(t: { teardown(fn: () => void): void }): Promise<{ server: Socket; client: Socket }> {
  const listener: Server = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const accepted = once(listener, 'connection');
  const client = connect(address.port, '127.0.0.1');
  client.on('error', () => undefined);
  await once(client, 'connect');
  const [server] = (await accepted) as [Socket];
  t.teardown(() => {
    client.destroy();
    server.destroy();
    listener.close();
  });
  return { server, client };
}

/** Blocks the event loop for `ms`, as a reload or a loaded machine does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

/** Resolves once `done()` holds, checked after each I/O poll, or after 2 s. */
async function settled(done: () => boolean): Promise<void> {
  const until = Date.now() + 2000;
  while (!done() && Date.now() < until) await new Promise((r) => setImmediate(r));
}

test('a deadline that expires during a stall does not close a connection whose request is already waiting in the socket', async (t) => {
  const { server, client } = await pair(t);
  let timeouts = 0;
  const stream = new StreamConnection(server, 100, undefined, () => timeouts++);
  const received: string[] = [];
  server.on('data', (chunk: Buffer) => {
    received.push(chunk.toString());
    stream.arm();
  });
  stream.arm();
  client.write('request');
  // The request reaches the kernel buffer now; the loop reads it only after the stall, and Node
  // runs the expired timer before that read.
  stall(300);
  await settled(() => received.length > 0 || server.destroyed);
  t.deepEqual(received, ['request']);
  t.is(timeouts, 0);
  t.false(server.destroyed);
  stream.disarm();
});

test('a deadline with nothing received closes the connection and reports the timeout once', async (t) => {
  const { server, client } = await pair(t);
  let timeouts = 0;
  const stream = new StreamConnection(server, 50, undefined, () => timeouts++);
  stream.arm();
  await once(client, 'close');
  t.is(timeouts, 1);
  t.true(server.destroyed);
  t.false(stream.armed);
});

test('a request read after the deadline fired that disarms it (its answer is being computed) keeps the connection', async (t) => {
  const { server, client } = await pair(t);
  let timeouts = 0;
  const stream = new StreamConnection(server, 30, undefined, () => timeouts++);
  server.on('data', () => stream.disarm());
  stream.arm();
  client.write('request');
  stall(100);
  await new Promise((r) => setTimeout(r, 100));
  t.is(timeouts, 0);
  t.false(server.destroyed);
});
