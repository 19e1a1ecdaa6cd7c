import test from 'ava';
import { connect, type Socket } from 'node:net';
import { buildQuery, decodeReply, frame, tcpExchange, udpQuery } from '../support/dnsClient.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { fixtureConfig, fixtureLocationFiles } from '../support/fixtureDeployment.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The standalone DNS listener's TCP limits (idle timeout, connection cap, slowloris) and its
 * sampled query log, end to end on an engine with tight limits and every query logged. Timing
 * tests: they measure how long a connection stays open, so they run in the serial pass after the
 * others (`*.timing.test.ts`, CONTRIBUTING.md), where parallel load does not stretch them.
 */

let limited: EngineProcess;
test.before(async () => {
  limited = await startEngine(fixtureConfig({ adminToken: false, dnsBehaviour: 'tcpIdleTimeoutMs: 4000, tcpMaxConnections: 2, queryLogSampleRate: 1' }), {
    files: fixtureLocationFiles(),
  });
});
test.after.always(stopAllEngines);

// The two TCP tests of the limited engine run one after the other: the idle one holds a connection
// for a second, which would take one of the cap test's two places.
test.serial('an idle TCP connection is closed after tcpIdleTimeoutMs', async (t) => {
  const started = Date.now();
  const r = await tcpExchange(limited.server, Buffer.alloc(0), 1, 10000);
  t.true(r.closedByServer);
  const waited = Date.now() - started;
  t.true(waited >= 3900 && waited < 15000, `closed after ${waited} ms (configured 4000)`);
});

test.serial('connections beyond tcpMaxConnections are closed at once; the others are served', async (t) => {
  const open = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<ReturnType<typeof connect>>((resolve, reject) => {
          const s = connect(limited.server.port, limited.server.address, () => resolve(s));
          s.on('error', reject);
        }),
    ),
  );
  t.teardown(() => open.forEach((s) => s.destroy()));
  // Both handshakes are complete, so the server accepts them before the third (accept is in order).
  const third = await tcpExchange(limited.server, frame(buildQuery({ name: 'ns1.example.test', type: 'A' })), 1, 3000);
  t.deepEqual([third.closedByServer, third.replies.length], [true, 0]);
  open.forEach((s) => s.destroy());
  // Once the server has seen the two closes, a new connection is served.
  let answers: string[] = [];
  await waitFor(
    'a connection served after the others closed',
    async () => {
      const r = await tcpExchange(limited.server, frame(buildQuery({ name: 'ns1.example.test', type: 'A' })), 1, 3000);
      answers = r.replies.length > 0 ? decodeReply(r.replies[0]!).answers : [];
      return r.replies.length > 0;
    },
    10_000,
    { everyMs: 50 },
  );
  t.deepEqual(answers, ['ns1.example.test A 192.0.2.53']);
});

/**
 * Opens a TCP connection that announces a 65535-byte query and then sends one byte of it every
 * `everyMs`: never a complete query, never silent.
 */
function trickle(server: { address: string; port: number }, everyMs: number): { socket: Socket; closed: Promise<number> } {
  const started = Date.now();
  const socket = connect(server.port, server.address, () => socket.write(Buffer.from([0xff, 0xff])));
  const timer = setInterval(() => socket.write(Buffer.alloc(1)), everyMs);
  const closed = new Promise<number>((resolve) => {
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    });
  });
  return { socket, closed };
}

test.serial('a TCP connection trickling bytes of a query is closed after tcpIdleTimeoutMs (slowloris)', async (t) => {
  const slow = trickle(limited.server, 200);
  t.teardown(() => slow.socket.destroy());
  const waited = await Promise.race([slow.closed, new Promise<number>((r) => setTimeout(() => r(-1), 20000))]);
  t.true(waited >= 3900 && waited < 15000, `closed after ${waited} ms (configured 4000; -1: still open after 20 s)`);
});

test.serial('at the connection cap a new connection replaces one with no complete query for half the idle timeout', async (t) => {
  const slow = [trickle(limited.server, 200), trickle(limited.server, 200)];
  t.teardown(() => slow.forEach((s) => s.socket.destroy()));
  await new Promise((r) => setTimeout(r, 2200));
  const third = await tcpExchange(limited.server, frame(buildQuery({ name: 'ns1.example.test', type: 'A' })), 1, 5000);
  t.deepEqual(
    third.replies.map((r) => decodeReply(r).answers),
    [['ns1.example.test A 192.0.2.53']],
  );
  const first = await Promise.race(slow.map((s) => s.closed));
  t.true(first < 4000, `one trickling connection was closed to make room (not by the 4 s timeout), after ${first} ms`);
  await Promise.all(slow.map((s) => s.closed));
});

test('the sampled query log truncates client and resolver addresses to /24 and /48', async (t) => {
  const from = limited.logs().length;
  await udpQuery(limited.server, { name: 'www.example.test', type: 'A', edns: { ecs: '10.20.30.77/32' } });
  const line = await limited.waitForLog((l) => l.component === 'query-log', 5000, from);
  t.like(line, {
    qname: 'www.example.test',
    qtype: 'A',
    transport: 'udp',
    client: '10.20.30.0/24',
    resolver: '127.0.0.0/24',
    ecs: true,
    rcode: 'NOERROR',
    scope: 24,
    answers: 1,
  });
  // The data centers the answer came from (the fixture's www is a GSLB record).
  t.is((line.dcs as string[]).length, 1);
  const from6 = limited.logs().length;
  await udpQuery(limited.dns[1]!, { name: 'www.example.test', type: 'A', edns: { ecs: '2001:db8:1234:5678::/64' } });
  const line6 = await limited.waitForLog((l) => l.component === 'query-log', 5000, from6);
  t.like(line6, { client: '2001:db8:1234::/48', resolver: '::/48' });
  t.false(JSON.stringify(limited.logs()).includes('10.20.30.77'), 'the full client address is never logged');
});
