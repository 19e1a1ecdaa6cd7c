import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { CompactTestClient, encodeQuery } from '../support/compactClient.js';
import { tcpQuery } from '../support/dnsClient.js';
import { CLI } from '../support/engineProcess.js';
import { childrenKilledAtExit } from '../support/childrenKilledAtExit.js';
import { startReplaceableEngine } from '../support/replaceableEngine.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * `gslbd ctl replace` (issue 26, items 2 and 3) with clients of the compact door (the CoreDNS
 * plugin's protocol), of the HTTP redirect door and of DNS over TCP, end to end: while the engine
 * hands over, compact clients keep their connections and send one query after another, others open
 * a connection per query, HTTP clients ask for redirects on new and on kept-alive connections, and
 * DNS clients open a TCP connection per query. No request may be lost, no connection refused or reset.
 */

const TOKEN = 'replace-doors-token-0123456789';
/** The replace starts this long after the clients, which go on until this long after it ended (ms). */
const REPLACE_AFTER_MS = 1500;
const AFTER_REPLACE_MS = 2000;

const children = childrenKilledAtExit();

/** What one kind of client did. */
interface Tally {
  ok: number;
  failures: string[];
}

function tally(): Tally {
  return { ok: 0, failures: [] };
}

async function compactQuery(c: CompactTestClient, id: number): Promise<void> {
  c.send(encodeQuery({ id, qtype: 1, qclass: 1, transport: 0, sourceAddress: '192.0.2.99', sourcePort: 5300, qname: 'www.example.test' }));
  const f = await c.next(20000);
  if (f.kind !== 'ANSWER' || f.id !== id || f.rcode !== 0 || f.answers.length !== 1) throw new Error(`unexpected frame ${JSON.stringify(f)}`);
}

/** One GET for the redirect host: resolves with the status, rejects on a connection error or after 20 s. */
function redirectGet(port: number, agent: Agent | false): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/x', headers: { host: 'www.example.test' }, agent, timeout: 20000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', reject);
    req.end();
  });
}

test('gslbd ctl replace with compact, redirect and DNS-over-TCP clients holding and opening connections: no request lost', async (t) => {
  t.timeout(240000);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-replace-doors-'));
  const compactPath = join(dir, 'compact.sock');
  const configFile = join(dir, 'gslbd.yaml');
  const urls = { 'us-east': 'https://us.example.net/', 'eu-west': 'https://eu.example.net/', 'ap-northeast': 'https://ap.example.net/' };
  writeFileSync(
    configFile,
    stringify({
      ...zonesConfig(),
      listeners: {
        dns: [{ address: '127.0.0.1', port: 0 }],
        admin: { address: '127.0.0.1', port: 0, token: TOKEN },
        compact: { path: compactPath },
        redirect: { address: '127.0.0.1', port: 0, hosts: [{ host: 'www.example.test', record: 'www.example.test', urls }] },
      },
    }),
  );
  const engine = await startReplaceableEngine(t, { configFile, dir, children });
  const { up } = engine;
  const redirectPort = Number(new URL(up.redirect!).port);
  const dnsPort = Number(up.dns[0]!.split(':')[1]);

  const held = tally();
  const fresh = tally();
  const httpFresh = tally();
  const httpKept = tally();
  const tcpFresh = tally();
  let running = true;
  const loop = async (body: () => Promise<void>, into: Tally): Promise<void> => {
    while (running) {
      try {
        await body();
        into.ok++;
      } catch (e) {
        into.failures.push((e as Error).message);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  let id = 1;
  const heldClients = await Promise.all([0, 1, 2].map(() => CompactTestClient.open(compactPath)));
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => keepAlive.destroy());
  const clients = [
    ...heldClients.map((c) => loop(() => compactQuery(c, id++), held)),
    loop(async () => {
      const c = await CompactTestClient.open(compactPath);
      try {
        await compactQuery(c, id++);
      } finally {
        c.close();
      }
    }, fresh),
    ...[0, 1].map(() =>
      loop(async () => {
        const r = await tcpQuery({ address: '127.0.0.1', port: dnsPort }, { name: 'www.example.test', type: 'A' }, 20000);
        if (r.answers[0] !== 'www.example.test A 192.0.2.10') throw new Error(`answers ${JSON.stringify(r.answers)}`);
      }, tcpFresh),
    ),
    loop(async () => {
      const status = await redirectGet(redirectPort, false);
      if (status !== 302) throw new Error(`status ${status}`);
    }, httpFresh),
    ...[0, 1].map(() =>
      loop(async () => {
        const status = await redirectGet(redirectPort, keepAlive);
        if (status !== 302) throw new Error(`status ${status}`);
      }, httpKept),
    ),
  ];
  await new Promise((r) => setTimeout(r, REPLACE_AFTER_MS));
  const ctl = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const c = spawn(process.execPath, [CLI, 'ctl', '--admin', `http://${up.admin}`, 'replace'], { env: { ...process.env, GSLBD_TOKEN: TOKEN } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) => resolve({ code, out }));
  });
  await new Promise((r) => setTimeout(r, AFTER_REPLACE_MS));
  running = false;
  await Promise.all(clients);
  for (const c of heldClients) c.close();

  t.is(ctl.code, 0, ctl.out);
  t.regex(engine.log(), /"msg":"hand-over complete: the old process exits"/);
  for (const [name, tl] of [
    ['compact, held connections', held],
    ['compact, a connection per query', fresh],
    ['redirect, a connection per request', httpFresh],
    ['redirect, kept-alive connections', httpKept],
    ['DNS over TCP, a connection per query', tcpFresh],
  ] as const) {
    t.log(`${name}: ${tl.ok} answered, ${tl.failures.length} failed ${JSON.stringify([...new Set(tl.failures)])}`);
    t.true(tl.ok > 0, `${name}: requests ran`);
    t.deepEqual(tl.failures, [], `${name}: no request lost`);
  }
});
