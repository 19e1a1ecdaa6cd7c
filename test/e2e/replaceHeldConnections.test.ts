import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { tcpQuery } from '../support/dnsClient.js';
import { CLI } from '../support/engineProcess.js';
import { freePort } from '../support/freePort.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * `gslbd ctl replace` (issue 26, item 3): a TCP connection the replacement's taken-over listening
 * socket accepted before its door listened on it is served, not left waiting. This test plays the
 * old process of the hand-over protocol (`src/process/processHandover.ts`) over the IPC channel,
 * so the moment between the sockets' arrival and the doors' start — a few milliseconds in a real
 * replace — lasts as long as the test needs: it hands over the standalone listener's TCP socket,
 * the admin listener and the redirect listener, closes its own copies, connects a client to each
 * while the replacement holds the sockets but has not started its doors, and only then lets it go on.
 */

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

function listening(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer(() => reject(new Error('the test accepted a connection: the replacement should hold the socket')));
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

/** One HTTP GET with the Host header: the status, or the error. */
function get(port: number, path: string, host: string, timeoutMs: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host }, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => resolve(e.message));
    req.end();
  });
}

test('connections accepted by the taken-over TCP sockets before the doors listen are served (DNS over TCP, admin, redirect)', async (t) => {
  t.timeout(120000);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-held-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [dnsPort, adminPort, redirectPort] = [await freePort(), await freePort(), await freePort()];
  const configFile = join(dir, 'gslbd.yaml');
  const urls = { 'us-east': 'https://us.example.net/', 'eu-west': 'https://eu.example.net/', 'ap-northeast': 'https://ap.example.net/' };
  writeFileSync(
    configFile,
    stringify({
      ...zonesConfig(),
      listeners: {
        dns: [{ address: '127.0.0.1', port: dnsPort }],
        admin: { address: '127.0.0.1', port: adminPort },
        redirect: { address: '127.0.0.1', port: redirectPort, hosts: [{ host: 'www.example.test', record: 'www.example.test', urls }] },
      },
      logging: { level: 'info' },
    }),
  );
  const sockets = {
    dns: { key: `tcp|0|127.0.0.1|${dnsPort}`, server: await listening(dnsPort) },
    admin: { key: `admin|127.0.0.1|${adminPort}`, server: await listening(adminPort) },
    redirect: { key: `http|127.0.0.1|${redirectPort}`, server: await listening(redirectPort) },
  };
  const child = spawn(process.execPath, [CLI, 'serve', configFile], {
    env: { ...process.env, GSLBD_REPLACES: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  t.teardown(() => {
    child.kill('SIGKILL');
    children.delete(child);
  });
  let log = '';
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  const message = (kind: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: { gslbd?: string }): void => {
        if (m.gslbd !== kind) return;
        child.off('message', onMessage);
        resolve();
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`the replacement exited (${code}) before "${kind}":\n${log}`)));
    });

  // The replacement loads, then asks for the sockets.
  await message('listeners');
  for (const [door, { key, server }] of Object.entries(sockets)) {
    await new Promise<void>((resolve, reject) => child.send({ gslbd: 'listener', door, key }, server, (e) => (e ? reject(e) : resolve())));
  }
  // Only the replacement holds the sockets now.
  await Promise.all(Object.values(sockets).map(({ server }) => new Promise<void>((r) => server.close(() => r()))));

  // Clients connect while the replacement has the sockets but its doors do not listen yet.
  const dns = tcpQuery({ address: '127.0.0.1', port: dnsPort }, { name: 'www.example.test', type: 'A' }, 20000).then(
    (r) => r.answers,
    (e: Error) => e.message,
  );
  const admin = get(adminPort, '/healthz', `127.0.0.1:${adminPort}`, 20000);
  const redirect = get(redirectPort, '/x', 'www.example.test', 20000);
  // Long enough for the replacement's event loop to accept them (it is idle, waiting for the next message).
  await new Promise((r) => setTimeout(r, 1500));
  const up = message('up');
  child.send({ gslbd: 'listeners-sent' });
  await up;
  const ack = message('handed-ack');
  child.send({ gslbd: 'handed' });
  await ack;

  t.deepEqual(await dns, ['www.example.test A 192.0.2.10'], `DNS over TCP answered\n${log}`);
  t.is(await admin, 200, 'the admin listener answered');
  t.is(await redirect, 302, 'the redirect listener answered');
});
