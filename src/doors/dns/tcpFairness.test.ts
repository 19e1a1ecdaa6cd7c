import test from 'ava';
import { connect, type Socket } from 'node:net';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { Engine } from '../../pipeline/engine.js';
import { buildQuery, decodeReply, frame } from '../../../test/support/dnsClient.js';
import { fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { DnsServer, tcpClientKey } from './dnsServer.js';
import { dnsBehaviourSchema } from './listenerSchema.js';

// The TCP listener's per-client limit and fair eviction at the connection cap (RFC 7766 §6.2.3).
// The idle timeout is a minute, so no connection here ever qualifies as idle (half of it): every
// outcome comes from the counts alone and holds however slow the machine is.

const ZONE = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
`;

async function listener(limits: { tcpMaxConnections: number; tcpMaxConnectionsPerClient: number }): Promise<{ port: number; stop: () => Promise<void> }> {
  const engine = new Engine(snapshotOf(ZONE), fixedContext(), createLogger('silent'));
  const dns = new DnsServer(
    { engine, metrics: new EngineMetrics(), log: createLogger('silent'), behaviour: dnsBehaviourSchema.parse({ tcpIdleTimeoutMs: 60000, ...limits }) },
    [{ address: '127.0.0.1', port: 0 }],
  );
  await dns.start();
  return { port: dns.bound[0]!.port, stop: () => dns.stop() };
}

/** A client connection that records when the server closes it. */
interface Held {
  readonly socket: Socket;
  readonly closed: Promise<void>;
  isClosed: boolean;
}

/** Opens a TCP connection from `from`; resolves once connected. */
function open(port: number, from: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    const held: Held = { socket, closed: new Promise((r) => socket.once('close', () => r())), isClosed: false };
    void held.closed.then(() => (held.isClosed = true));
    socket.once('connect', () => resolve(held));
    socket.once('error', (e) => (held.isClosed ? undefined : reject(e)));
    socket.on('error', () => undefined);
  });
}

/** Opens connections one after the other, so the server accepts them in this order. */
async function openAll(port: number, from: string, n: number): Promise<Held[]> {
  const all: Held[] = [];
  for (let i = 0; i < n; i++) all.push(await open(port, from));
  return all;
}

/** Sends a query on an open connection; resolves with its answers, or null when the server closes it first. */
function ask(held: Held): Promise<string[] | null> {
  return new Promise((resolve) => {
    let pending = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 2 || pending.length < 2 + pending.readUInt16BE(0)) return;
      held.socket.off('data', onData);
      resolve(decodeReply(pending.subarray(2, 2 + pending.readUInt16BE(0))).answers);
    };
    held.socket.on('data', onData);
    void held.closed.then(() => resolve(null));
    held.socket.write(frame(buildQuery({ name: 'ns1.example.test', type: 'A' })));
  });
}

const ANSWER = ['ns1.example.test A 192.0.2.53'];

test('a client at tcpMaxConnectionsPerClient: its next connection is closed at once, its others and other clients are served', async (t) => {
  const { port, stop } = await listener({ tcpMaxConnections: 100, tcpMaxConnectionsPerClient: 3 });
  const held: Held[] = [];
  t.teardown(async () => {
    held.forEach((h) => h.socket.destroy());
    await stop();
  });
  held.push(...(await openAll(port, '127.0.0.2', 3)));
  const fourth = await open(port, '127.0.0.2');
  held.push(fourth);
  await fourth.closed;
  t.deepEqual(await Promise.all(held.slice(0, 3).map(ask)), [ANSWER, ANSWER, ANSWER], 'the three within the limit stay open and answer');
  const other = await openAll(port, '127.0.0.3', 3);
  held.push(...other);
  t.deepEqual(await Promise.all(other.map(ask)), [ANSWER, ANSWER, ANSWER], 'another client has a limit of its own');
});

test('at tcpMaxConnections a new client takes the place of a connection of the client holding the most, however fresh', async (t) => {
  const { port, stop } = await listener({ tcpMaxConnections: 6, tcpMaxConnectionsPerClient: 64 });
  const held: Held[] = [];
  t.teardown(async () => {
    held.forEach((h) => h.socket.destroy());
    await stop();
  });
  const greedy = await openAll(port, '127.0.0.2', 4);
  const modest = await openAll(port, '127.0.0.3', 2);
  held.push(...greedy, ...modest);
  const newcomer = await open(port, '127.0.0.4');
  held.push(newcomer);
  t.deepEqual(await ask(newcomer), ANSWER, 'the new client is served at the cap');
  // The place came from 127.0.0.2 (4 > 0 + 1): its first connection, the one waiting longest.
  await greedy[0]!.closed;
  t.deepEqual(await Promise.all([...greedy.slice(1), ...modest].map(ask)), [ANSWER, ANSWER, ANSWER, ANSWER, ANSWER]);
  // Now 3 / 2 / 1: 127.0.0.3 (holding 2) may not take a place from 127.0.0.2 (holding 3), so two
  // clients never take places from each other in turn; nor may 127.0.0.2 take one back.
  const third = await open(port, '127.0.0.3');
  held.push(third);
  await third.closed;
  const fourth = await open(port, '127.0.0.2');
  held.push(fourth);
  await fourth.closed;
  t.deepEqual(await Promise.all([...greedy.slice(1), ...modest, newcomer].map(ask)), [ANSWER, ANSWER, ANSWER, ANSWER, ANSWER, ANSWER]);
  // A fourth client takes a place again, from the one holding the most (127.0.0.2, 3 > 0 + 1).
  const late = await open(port, '127.0.0.5');
  held.push(late);
  t.deepEqual(await ask(late), ANSWER);
  await greedy[1]!.closed;
});

test('a client is an IPv4 address or an IPv6 /64 (IPv4-mapped IPv6 counts as its IPv4 address)', (t) => {
  t.is(tcpClientKey('192.0.2.1'), '192.0.2.1');
  t.is(tcpClientKey('::ffff:192.0.2.1'), '192.0.2.1');
  t.is(tcpClientKey('2001:db8:1:2::1'), tcpClientKey('2001:db8:1:2:ffff::9'));
  t.not(tcpClientKey('2001:db8:1:2::1'), tcpClientKey('2001:db8:1:3::1'));
});
