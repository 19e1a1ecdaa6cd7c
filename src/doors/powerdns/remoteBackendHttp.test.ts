import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { fixtureEngine } from '../../../test/support/powerdnsFixture.js';
import { activatedTcpSocket } from './activatedTcpSocket.js';
import { powerDnsFrontDoor, type RemoteBackendServer } from './remoteBackendServer.js';

const LOOKUP_STATIC = JSON.stringify({
  method: 'lookup',
  parameters: { local: '127.0.0.1', qname: 'static.example.test.', qtype: 'A', 'real-remote': '127.0.0.1/32', remote: '127.0.0.1', 'zone-id': -1 },
});
const STATIC_REPLY = { result: [{ qname: 'static.example.test.', qtype: 'A', content: '192.0.2.20', ttl: 60 }] };

async function start(t: { teardown(fn: () => unknown): void }, maxRequestBytes = 65536): Promise<{ server: RemoteBackendServer; port: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-http-'));
  const { engine } = fixtureEngine();
  const server = powerDnsFrontDoor(
    engine,
    new EngineMetrics(),
    engine.log,
    { path: 'gslbd.sock', mode: '0660', maxConnections: 64, maxRequestBytes, requestTimeoutMs: 10000, http: { address: '127.0.0.1', port: 0 } },
    join(dir, 'gslbd.sock'),
  );
  await server.start();
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { server, port: Number(server.httpAddress()!.split(':').pop()) };
}

/** One HTTP request as PowerDNS's HTTP connector sends it (`post=1,post_json=1`), on `agent`'s kept-alive connection. */
function post(port: number, body: string, agent: Agent, method = 'POST'): Promise<{ status: number; body: string; localPort: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/dns', method, agent, headers: { 'content-type': 'text/javascript; charset=utf-8' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, localPort: req.socket?.localPort ?? 0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('HTTP listener: a POSTed request document gets the reply document the Unix socket gives, on one kept-alive connection', async (t) => {
  const { server, port } = await start(t);
  t.regex(server.httpAddress()!, /^127\.0\.0\.1:\d+$/);
  t.deepEqual(server.describe(), { powerdns: server.path, powerdnsHttp: server.httpAddress() });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const init = await post(port, JSON.stringify({ method: 'initialize', parameters: { instance: 'http' } }), agent);
  t.is(init.status, 200);
  t.is((JSON.parse(init.body) as { result: unknown }).result, true);
  const first = await post(port, LOOKUP_STATIC, agent);
  const second = await post(port, LOOKUP_STATIC, agent);
  t.deepEqual(JSON.parse(first.body), STATIC_REPLY);
  t.deepEqual(JSON.parse(second.body), STATIC_REPLY, 'a repeated request (answered from the line) is the same');
  t.is(first.localPort, second.localPort, 'kept alive');
  const malformed = await post(port, '{"method": ', agent);
  t.is(malformed.status, 200);
  t.false('result' in (JSON.parse(malformed.body) as object), 'an error reply (PowerDNS: SERVFAIL)');
});

test('HTTP listener: only POST; a body over maxRequestBytes gets 413 and its connection is closed', async (t) => {
  const { port } = await start(t, 1024);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  t.is((await post(port, '', agent, 'GET')).status, 405);
  t.is((await post(port, 'x'.repeat(4096), agent)).status, 413);
  t.deepEqual(JSON.parse((await post(port, LOOKUP_STATIC, agent)).body), STATIC_REPLY, 'a new connection is served');
});

test('activatedTcpSocket: none without socket activation, none for another process or port 0', (t) => {
  t.is(activatedTcpSocket(8053, {}), undefined);
  t.is(activatedTcpSocket(8053, { LISTEN_PID: String(process.pid + 1), LISTEN_FDS: '1' }), undefined);
  t.is(activatedTcpSocket(0, { LISTEN_PID: String(process.pid), LISTEN_FDS: '1' }), undefined);
});
