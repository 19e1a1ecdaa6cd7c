import test from 'ava';
import { connect, type Socket } from 'node:net';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { Engine } from '../../pipeline/engine.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { waitFor } from '../../../test/support/waitFor.js';
import { RedirectServer } from './redirectServer.js';

const TOPOLOGY = `
${EXAMPLE_ZONE}
datacenters: [{ name: ams }]
services: [{ name: web, endpoints: [{ dc: ams, address: 192.0.2.1 }] }]
records: [{ name: www.example.test, type: A, ttl: 30, service: web }]
`;

/** A redirect listener on a free loopback port with `limits`, answering from a real engine. */
async function server(limits: string): Promise<{ door: RedirectServer; metrics: EngineMetrics }> {
  const config = parseConfigText(`
listeners:
  redirect:
    address: 127.0.0.1
    port: 0
${limits}
    hosts: [{ host: www.example.test, record: www.example.test, urls: { ams: "https://ams.example.net" } }]
${TOPOLOGY}`);
  const log = createLogger('silent');
  const engine = new Engine(snapshotOf(TOPOLOGY), fixedContext(), log);
  const metrics = new EngineMetrics();
  const door = new RedirectServer(config.listeners.redirect!, { file: 'gslbd.yaml', engine, metrics, log, afterAnswer: [] }, undefined);
  await door.start();
  return { door, metrics };
}

/** An open connection to the door and everything it has received; `closed` resolves when the server closes it. */
function open(port: number): { socket: Socket; received: () => string; closed: Promise<number> } {
  const socket = connect({ host: '127.0.0.1', port });
  let data = '';
  socket.setEncoding('latin1');
  socket.on('data', (c: string) => (data += c));
  socket.on('error', () => {});
  const opened = performance.now();
  const closed = new Promise<number>((r) => socket.once('close', () => r(performance.now() - opened)));
  return { socket, received: () => data, closed };
}

const GET = 'GET /x HTTP/1.1\r\nHost: www.example.test\r\n\r\n';

test('connections beyond maxConnections are closed at once and counted', async (t) => {
  const { door, metrics } = await server('    maxConnections: 2');
  t.teardown(() => door.stop());
  const first = open(door.port);
  const second = open(door.port);
  first.socket.write(GET);
  second.socket.write(GET);
  await waitFor('two answered connections', () => first.received().includes('302') && second.received().includes('302'), 10_000);
  const third = open(door.port);
  third.socket.write(GET);
  await third.closed;
  t.is(third.received(), '', 'closed without an answer');
  t.regex(await metrics.registry.metrics(), /gslbd_redirect_connections_dropped_total 1/);
  first.socket.destroy();
  await first.closed;
  const fourth = open(door.port);
  fourth.socket.write(GET);
  await waitFor('a new connection once one closed', () => fourth.received().includes('302'), 10_000);
  second.socket.destroy();
  fourth.socket.destroy();
});

test('request limits: header size (431), a whole request within requestTimeoutMs, requests per connection', async (t) => {
  const { door } = await server('    maxHeaderBytes: 1024\n    requestTimeoutMs: 300\n    maxRequestsPerConnection: 2');
  t.teardown(() => door.stop());

  const big = open(door.port);
  big.socket.write(`GET / HTTP/1.1\r\nHost: www.example.test\r\nX-Pad: ${'a'.repeat(2000)}\r\n\r\n`);
  await big.closed;
  t.regex(big.received(), /^HTTP\/1\.1 431 /);

  // A client that trickles its headers is closed after requestTimeoutMs (checked every second at most).
  const slow = open(door.port);
  slow.socket.write('GET / HTTP/1.1\r\nHost: www.example.test\r\n');
  const timer = setInterval(() => slow.socket.write('X-Slow: 1\r\n'), 50);
  const ms = await slow.closed;
  clearInterval(timer);
  t.regex(slow.received(), /^HTTP\/1\.1 408 /);
  t.true(ms >= 300 && ms < 5000, `closed after ${Math.round(ms)} ms`);

  const kept = open(door.port);
  kept.socket.write(GET + GET + GET);
  const keptMs = await kept.closed;
  t.deepEqual(kept.received().match(/HTTP\/1\.1 \d+ |Connection: [\w-]+/g), ['HTTP/1.1 302 ', 'Connection: keep-alive', 'HTTP/1.1 302 ', 'Connection: close']);
  t.true(keptMs < 4000, `closed after the second answer (${Math.round(keptMs)} ms), not after the idle timeout`);
});
