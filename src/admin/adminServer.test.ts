import test from 'ava';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createLogger } from '../core/telemetry/logger.js';
import { parseConfigText } from '../process/loadConfig.js';
import { ADMIN_LIMITS, AdminServer, type AdminLimits } from './adminServer.js';

/**
 * The admin listener's protocol details and bounds, against an {@link AdminServer} of the test's
 * own: the Bearer scheme in any case, bodies of GET ignored, `Allow` on 405, per-client and total
 * connection caps, header timeouts, and the refusal of a token-less listener off loopback.
 */

const TOKEN = 'test-token-0123456789abcdef';

async function start(limits: Partial<AdminLimits> = {}) {
  const admin = new AdminServer(TOKEN, createLogger('silent'), undefined, { ...ADMIN_LIMITS, ...limits });
  admin.route({ method: 'GET', path: '/healthz', mutating: false, handle: () => ({ status: 200, json: { status: 'ok' } }) });
  admin.route({ method: 'POST', path: '/reload', mutating: true, handle: (r) => ({ status: 200, json: { body: r.body ?? null } }) });
  admin.route({ method: 'DELETE', path: '/reload', mutating: true, handle: () => ({ status: 200, json: {} }) });
  await admin.start('127.0.0.1', 0);
  return admin;
}

/** One raw HTTP/1.1 exchange (a body on GET is what fetch cannot send). */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { ...headers, 'content-length': Buffer.byteLength(body), connection: 'close' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('the Bearer scheme is matched in any case (RFC 9110 §11.1); a wrong scheme or token is still 401', async (t) => {
  const admin = await start();
  t.teardown(() => admin.stop());
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
    t.is((await raw(admin.port, 'POST', '/reload', { authorization: `${scheme} ${TOKEN}` })).status, 200, scheme);
  }
  t.is((await raw(admin.port, 'POST', '/reload', { authorization: `Bearer  ${TOKEN}` })).status, 200, 'more than one space');
  for (const authorization of [`Basic ${TOKEN}`, `Bearer${TOKEN}`, TOKEN, 'Bearer wrong', `Bearer ${TOKEN}x`]) {
    t.is((await raw(admin.port, 'POST', '/reload', { authorization })).status, 401, authorization);
  }
});

test('a GET or DELETE ignores any body, valid JSON or not; a POST still parses its own', async (t) => {
  const admin = await start();
  t.teardown(() => admin.stop());
  for (const body of ['', '{nope', '{"a":1}', 'x'.repeat(100_000)]) {
    const r = await raw(admin.port, 'GET', '/healthz', { 'content-type': 'application/json' }, body);
    t.deepEqual([r.status, JSON.parse(r.text)], [200, { status: 'ok' }], `GET with a ${body.length}-byte body`);
    t.is((await raw(admin.port, 'DELETE', '/reload', { authorization: `Bearer ${TOKEN}` }, body)).status, 200);
  }
  t.is((await raw(admin.port, 'POST', '/reload', { authorization: `Bearer ${TOKEN}` }, '{nope')).status, 400);
  t.deepEqual(JSON.parse((await raw(admin.port, 'POST', '/reload', { authorization: `Bearer ${TOKEN}` }, '{"a":1}')).text), { body: { a: 1 } });
});

test('405 carries Allow with every method the path has (RFC 9110 §15.5.6); 404 has none', async (t) => {
  const admin = await start();
  t.teardown(() => admin.stop());
  const r = await raw(admin.port, 'PUT', '/reload', {});
  t.deepEqual([r.status, r.headers.allow], [405, 'DELETE, POST']);
  const g = await raw(admin.port, 'POST', '/healthz', {});
  t.deepEqual([g.status, g.headers.allow], [405, 'GET']);
  const n = await raw(admin.port, 'GET', '/nope', {});
  t.deepEqual([n.status, n.headers.allow], [404, undefined]);
});

/** Opens a TCP connection to the admin port from `from` and resolves once it is connected. */
function open(port: number, from = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, localAddress: from }, () => resolve(s));
    s.on('error', reject);
  });
}

/**
 * Resolves with true when the server closes `s` within `ms`: its FIN (`end`) or reset (`error`)
 * is read. The verdict "not closed" waits for one more I/O poll after the timer: after an
 * event-loop stall Node runs expired timers before it reads sockets, so a close already in the
 * socket would otherwise lose to the timer (seen in a loaded CI run).
 */
function closedWithin(s: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => setImmediate(() => resolve(false)), ms);
    const closed = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    s.once('end', closed);
    s.once('close', closed);
    s.once('error', closed);
    s.on('error', () => undefined);
  });
}

test('connections over the per-client cap are closed at once; other clients are served; a closed one frees its place', async (t) => {
  // Half of 6 is 3: once three are open, the per-client cap of 3 refuses the fourth of 127.0.0.2.
  const admin = await start({ maxConnectionsPerClient: 3, maxConnections: 6 });
  t.teardown(() => admin.stop());
  const held = await Promise.all([0, 1, 2].map(() => open(admin.port, '127.0.0.2')));
  t.teardown(() => held.forEach((s) => s.destroy()));
  const extra = await open(admin.port, '127.0.0.2');
  t.true(await closedWithin(extra, 2000), 'the fourth connection of 127.0.0.2 is closed');
  t.is((await raw(admin.port, 'GET', '/healthz', {})).status, 200, '127.0.0.1 is served meanwhile');
  held.pop()!.destroy();
  // The server sees the close a moment later (later still on a loaded machine): retried for a while.
  let taken = false;
  for (let i = 0; i < 20 && !taken; i++) {
    const again = await open(admin.port, '127.0.0.2');
    taken = !(await closedWithin(again, 300));
    again.destroy();
  }
  t.true(taken, 'a place freed by a close is taken again');
});

test('while the listener is less than half full, one client may hold more than its share (parallel requests of one scraper or test suite)', async (t) => {
  const admin = await start({ maxConnectionsPerClient: 2, maxConnections: 10 });
  t.teardown(() => admin.stop());
  const held = await Promise.all([0, 1, 2, 3].map(() => open(admin.port, '127.0.0.2')));
  t.teardown(() => held.forEach((s) => s.destroy()));
  t.deepEqual(await Promise.all(held.map((s) => closedWithin(s, 500))), [false, false, false, false]);
  const fifth = await open(admin.port, '127.0.0.2');
  t.teardown(() => fifth.destroy());
  t.false(await closedWithin(fifth, 500), 'the fifth connection: 4 of 10 open, under half');
  const sixth = await open(admin.port, '127.0.0.2');
  t.true(await closedWithin(sixth, 2000), 'half full: the client is over its share of 2');
});

test('connections over the total cap are closed at once, whatever their client', async (t) => {
  const admin = await start({ maxConnectionsPerClient: 2, maxConnections: 6 });
  t.teardown(() => admin.stop());
  const held = await Promise.all([2, 3, 4].flatMap((n) => [open(admin.port, `127.0.0.${n}`), open(admin.port, `127.0.0.${n}`)]));
  t.teardown(() => held.forEach((s) => s.destroy()));
  const extra = await open(admin.port, '127.0.0.5');
  t.true(await closedWithin(extra, 2000));
});

test('a connection that sends no complete headers, or nothing, is closed after the header or idle timeout', async (t) => {
  const admin = await start({ headersTimeoutMs: 400, requestTimeoutMs: 800, idleTimeoutMs: 600 });
  t.teardown(() => admin.stop());
  const [slow, silent] = await Promise.all([open(admin.port), open(admin.port)]);
  // Bounds, not exact times: Node checks the header timeout on an interval.
  const closed = [closedWithin(slow, 5000), closedWithin(silent, 5000)];
  slow.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  t.deepEqual(await Promise.all(closed), [true, true], 'slow headers, nothing sent');
});

test('an admin listener off loopback without a token is refused at load; with one, or on loopback, it loads', (t) => {
  const ZONE = 'zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test, serial: 1 }, ns: [ns1.example.test] }]\n';
  const admin = (fields: string) => `listeners: { dns: [], admin: { port: 0, ${fields} } }\n${ZONE}`;
  for (const address of ['0.0.0.0', '::', '192.0.2.1', '2001:db8::1', '::ffff:192.0.2.1']) {
    const e = t.throws(() => parseConfigText(admin(`address: "${address}"`)), undefined, address);
    t.regex(e.message, /listeners\.admin\.address: an admin listener on an address other than loopback needs "token" or "tokenFile"/, address);
    t.notThrows(() => parseConfigText(admin(`address: "${address}", token: ${TOKEN}`)), address);
  }
  for (const address of ['127.0.0.1', '127.3.2.1', '::1', '::ffff:127.0.0.1']) t.notThrows(() => parseConfigText(admin(`address: "${address}"`)), address);
});

/** Opens an event stream; resolves with its status and the first chunk received. */
function openStream(port: number, path = '/events'): Promise<{ status: number; first: string; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      res.setEncoding('utf8');
      res.once('data', (c: string) => resolve({ status: res.statusCode!, first: c, close: () => req.destroy() }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('event streams are counted apart from the admin connections: subscribed consoles never crowd out other clients; over their own cap, 503', async (t) => {
  const admin = await start({ maxConnectionsPerClient: 2, maxConnections: 2, maxEventStreams: 3, heartbeatMs: 200 });
  t.teardown(() => admin.stop());
  const subscribed: number[] = [];
  admin.stream({ path: '/events', subscribe: (send) => (send('hello', { n: 1 }), subscribed.push(1), () => subscribed.pop()) });
  const streams = [await openStream(admin.port), await openStream(admin.port), await openStream(admin.port)];
  t.teardown(() => streams.forEach((s) => s.close()));
  t.deepEqual(
    streams.map((s) => s.status),
    [200, 200, 200],
  );
  t.is(admin.eventStreams, 3);
  // Two admin connections are still there for other requests (the cap of 2 holds no stream).
  const [a, b] = await Promise.all([raw(admin.port, 'GET', '/healthz', {}), raw(admin.port, 'GET', '/healthz', {})]);
  t.deepEqual([a.status, b.status], [200, 200]);
  const fourth = await raw(admin.port, 'GET', '/events', {});
  t.is(fourth.status, 503);
  // A heartbeat comment arrives on an open stream.
  const beat = await new Promise<string>((resolve) => {
    const req = request({ host: '127.0.0.1', port: admin.port, path: '/events' }, (res) => {
      res.setEncoding('utf8');
      let seen = '';
      res.on('data', (c: string) => {
        seen += c;
        if (seen.includes(': heartbeat')) {
          req.destroy();
          resolve(seen);
        }
      });
    });
    streams.pop()!.close();
    setTimeout(() => req.end(), 300);
  });
  t.regex(beat, /event: hello\ndata: \{"n":1\}\n\n/);
});
