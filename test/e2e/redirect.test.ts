import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedirectServer } from '../../src/doors/redirect/redirectServer.js';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { selfSignedCertificate, startHttpPeer } from '../health/loopbackPeers.js';
import { curl, type CurlResponse } from '../support/curl.js';
import { freePort } from '../support/freePort.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The HTTP redirect front door end to end (docs/PRODUCT.md §6): an engine with `listeners.redirect`,
 * asked by the real `curl` from different loopback source addresses (`--interface 127.0.0.x`),
 * which custom location entries place in Europe, North America and Asia.
 */

const ZONE = `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]`;

/** Three sites; the source addresses tests connect from, placed near each by custom location entries. */
const TOPOLOGY = `
geo:
  custom:
    - { cidr: 127.0.0.2/32, location: EU.NL, lat: 52.4, lon: 4.9 }
    - { cidr: 127.0.0.3/32, location: NA.US, lat: 40.7, lon: -74.0 }
    - { cidr: 127.0.0.4/32, location: AS.JP, lat: 35.7, lon: 139.7 }
    - { cidr: "::1/128", location: AS.JP, lat: 35.7, lon: 139.7 }
datacenters:
  - { name: ams, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: nyc, location: NA.US, lat: 40.7, lon: -74.0 }
  - { name: tyo, location: AS.JP, lat: 35.7, lon: 139.7 }`;

const URLS = '{ ams: "https://ams.example.net/", nyc: "https://nyc.example.net/shop/", tyo: "http://tyo.example.net:8080" }';
const SITE = { ams: 'https://ams.example.net', nyc: 'https://nyc.example.net/shop', tyo: 'http://tyo.example.net:8080' } as const;
const ORIGINS = new Set(Object.values(SITE).map((u) => new URL(u).origin));
const FROM = { ams: '127.0.0.2', nyc: '127.0.0.3', tyo: '127.0.0.4' } as const;
const PROXY = '127.0.0.9';

const engines: RunningGslbd[] = [];
test.after.always(() => Promise.all(engines.map((g) => g.stop())));

async function start(body: string): Promise<{ g: RunningGslbd; url: string; admin: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-redirect-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, `logging: { level: silent }\n${body}`);
  const g = await startGslbd(file, { signals: false, watchFile: false });
  engines.push(g);
  const door = g.doors.get('redirect') as RedirectServer;
  const address = (door.describe().redirect as string).replace(/:\d+$/, '');
  return { g, url: `${address}:${door.port}`, admin: `http://127.0.0.1:${g.admin?.port ?? 0}`, dir };
}

/** The main engine: `www` by static proximity, `fs` whose only endpoint is down (its fail-safe list answers). */
const main = (async () => {
  const closed = await freePort();
  return start(`
listeners:
  admin: { address: 127.0.0.1, port: 0 }
  redirect:
    address: 127.0.0.1
    port: 0
    trustedProxies: [${PROXY}/32]
    hosts:
      - { host: www.example.test, record: www.example.test, urls: ${URLS} }
      - { host: fs.example.test, record: fs.example.test, urls: { ams: "https://ams.example.net" } }
${ZONE}
${TOPOLOGY}
services:
  - name: web
    endpoints: [{ dc: ams, address: 192.0.2.1 }, { dc: nyc, address: 192.0.2.2 }, { dc: tyo, address: 192.0.2.3 }]
  - name: dead
    endpoints: [{ dc: ams, address: 192.0.2.9, monitors: [tcp], check: { address: 127.0.0.1, port: ${closed} } }]
records:
  - { name: www.example.test, type: A, ttl: 30, service: web }
  - { name: fs.example.test, type: A, ttl: 30, service: dead, failsafe: [192.0.2.99], failsafeTtl: 7, health: { allDown: failsafe } }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: 100, timeoutMs: 90, rise: 1, fall: 1 }]
`);
})();
// A failure to start is reported by the first test that awaits it.
main.catch(() => {});

/** GET `path` for `host` from `source` on the main engine. */
async function ask(source: string, path = '/', extra: readonly string[] = [], host = 'www.example.test'): Promise<CurlResponse> {
  const { url } = await main;
  return curl(['--interface', source, '-H', `Host: ${host}`, ...extra, `${url}${path}`]);
}

test('each client is redirected to its own site, path and query kept, cacheable privately for the record TTL', async (t) => {
  for (const [dc, source] of Object.entries(FROM) as [keyof typeof SITE, string][]) {
    const r = await ask(source, '/cart/item?id=7&x=%2F');
    t.is(r.status, 302, dc);
    t.is(r.headers.get('location'), `${SITE[dc]}/cart/item?id=7&x=%2F`, dc);
    t.is(r.headers.get('cache-control'), 'private, max-age=30', dc);
  }
  const head = await ask(FROM.nyc, '/', ['-I']);
  t.is(head.status, 302);
  t.is(head.headers.get('location'), `${SITE.nyc}/`);
});

test('X-Forwarded-For is believed only from a trusted proxy, read from the right', async (t) => {
  const via = async (source: string, xff: string): Promise<string | undefined> =>
    (await ask(source, '/p', ['-H', `X-Forwarded-For: ${xff}`])).headers.get('location');
  t.is(await via(PROXY, FROM.tyo), `${SITE.tyo}/p`, 'the client behind the proxy');
  t.is(await via(PROXY, `${FROM.tyo}, ${PROXY}`), `${SITE.tyo}/p`, 'through two trusted hops');
  t.is(await via(PROXY, `${FROM.nyc}, ${FROM.ams}`), `${SITE.ams}/p`, 'what the client prepended is not believed');
  t.is(await via(FROM.ams, FROM.tyo), `${SITE.ams}/p`, 'a client cannot choose its site by writing the header');
});

test('a host the door does not redirect gets 421; a malformed request 400', async (t) => {
  const unknown = await ask(FROM.ams, '/', [], 'evil.example');
  t.is(unknown.status, 421);
  t.is(unknown.headers.get('location'), undefined);
  t.is((await ask(FROM.ams, '/', [], 'evil.example:443')).status, 421);
  t.is((await ask(FROM.ams, '/', [], 'www.example.test@evil.example')).status, 400);
  t.is((await ask(FROM.ams, '/', [], 'evil.example, www.example.test')).status, 400);
  t.is((await ask(FROM.ams, '/', ['-X', 'OPTIONS', '--request-target', '*'])).status, 400);
});

test('Host, absolute-URI and path tricks never yield an off-site URL', async (t) => {
  const tricks: [string, readonly string[], string?][] = [
    ['//evil.example/x', ['--path-as-is']],
    ['/', ['--request-target', '//evil.example/x']],
    ['/', ['--request-target', '/\\evil.example/x']],
    ['/', ['--request-target', '/@evil.example']],
    ['/', ['--request-target', '/%0d%0aLocation:%20https://evil.example/']],
    ['/', ['--request-target', '/x?next=https://evil.example/&u=//evil.example']],
    ['/', ['--request-target', '/../../evil.example']],
    ['/', ['--request-target', 'http://www.example.test/x'], 'evil.example'],
    ['/', ['--request-target', 'http://www.example.test:8080//evil.example'], 'evil.example'],
    ['/', ['--request-target', 'http://evil.example/x']],
    ['/', ['--request-target', 'http://www.example.test@evil.example/x']],
    ['/', ['--request-target', 'http://evil.example@www.example.test/x']],
    ['/', [], 'www.example.test.evil.example'],
  ];
  for (const [path, extra, host] of tricks) {
    const r = await ask(FROM.nyc, path, extra, host);
    const what = `${host ?? 'www.example.test'} ${extra.join(' ')} ${path}`;
    t.true([302, 400, 421].includes(r.status), `${what}: ${r.status}`);
    const location = r.headers.get('location');
    if (r.status !== 302) {
      t.is(location, undefined, what);
      continue;
    }
    t.true(ORIGINS.has(new URL(location!).origin), `${what} → ${location}`);
    t.true(location!.startsWith(`${SITE.nyc}/`), `${what} → ${location}`);
  }
  // Two Host headers (curl sends one): refused, not the first or the last.
  const { url } = await main;
  const reply = await rawRequest(url, 'GET / HTTP/1.1\r\nHost: www.example.test\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
  t.regex(reply, /^HTTP\/1\.1 400 /);
  t.notRegex(reply, /location:/i);
});

test('a request with a body is answered and its connection closed unread', async (t) => {
  const r = await ask(FROM.ams, '/form', ['-X', 'POST', '--data', 'a=1']);
  t.is(r.status, 302);
  t.is(r.headers.get('connection'), 'close');
});

test('a record that answers its fail-safe list has no site: 503 with Retry-After, never cached', async (t) => {
  let last: CurlResponse | undefined;
  await waitFor('the fail-safe answer', async () => (last = await ask(FROM.ams, '/', [], 'fs.example.test')).status === 503, 20_000, {
    detail: () => `last status ${last?.status}`,
  });
  t.is(last!.headers.get('retry-after'), '7');
  t.is(last!.headers.get('cache-control'), 'no-store');
  t.is(last!.headers.get('location'), undefined);
});

test('the decision trace: GET /explain/redirect on the admin API', async (t) => {
  const { admin } = await main;
  const r = await fetch(`${admin}/explain/redirect?host=WWW.example.test&client=${FROM.tyo}&path=${encodeURIComponent('/a?b=1')}`);
  t.is(r.status, 200);
  const e = (await r.json()) as { selections: { steps: { stage: string }[] }[] };
  t.like(e, {
    host: 'www.example.test',
    record: 'www.example.test',
    type: 'A',
    client: { address: FROM.tyo, location: 'AS.JP' },
    redirect: { status: 302, location: `${SITE.tyo}/a?b=1`, maxAge: 30, dc: 'tyo' },
    answer: { rcode: 0, dcs: ['tyo'], answers: ['www.example.test. 30 IN A 192.0.2.3'] },
  });
  t.true(
    e.selections[0]!.steps.some((s) => s.stage === 'static-proximity'),
    'the same trace /explain shows for DNS',
  );
  t.is((await fetch(`${admin}/explain/redirect?host=evil.example&client=${FROM.tyo}`)).status, 404);
  t.is((await fetch(`${admin}/explain/redirect?host=www.example.test`)).status, 400);
  t.is((await fetch(`${admin}/explain/redirect?host=www.example.test&client=10.0.0.0/8`)).status, 400);
});

test('metrics per host and data center; no client address in them', async (t) => {
  await ask(FROM.tyo, '/m');
  await ask(FROM.tyo, '/', [], 'evil.example');
  const { admin } = await main;
  const text = await (await fetch(`${admin}/metrics`)).text();
  t.regex(text, /gslbd_redirect_requests_total\{host="www\.example\.test",dc="tyo",status="302"\} [1-9]/);
  t.regex(text, /gslbd_redirect_requests_total\{host="",dc="",status="421"\} [1-9]/);
  t.regex(text, /gslbd_dc_answers_total\{dc="tyo"\} [1-9]/);
  t.regex(text, /gslbd_redirect_connections_dropped_total 0/);
  t.false(/127\.0\.0\.[2-9]/.test(text));
});

// Serial (ava runs serial tests before the others): its monitors time checks, and the other tests' curl processes load the machine.
test.serial('a local-first record redirects to the local site while it is up, else to the peer its policy chooses', async (t) => {
  const peers = { ams: await startHttpPeer(), nyc: await startHttpPeer(), tyo: await startHttpPeer() };
  t.teardown(() => Promise.all(Object.values(peers).map((p) => p.stop())));
  const ep = (dc: keyof typeof peers, n: number) =>
    `{ dc: ${dc}, address: 198.51.100.${n}, monitors: [http], check: { address: 127.0.0.1, port: ${peers[dc].port} } }`;
  const { g, url } = await start(`
site: ams
listeners:
  redirect:
    address: 127.0.0.1
    port: 0
    hosts: [{ host: app.example.test, record: app.example.test, urls: ${URLS} }]
${ZONE}
${TOPOLOGY}
services:
  - name: app
    endpoints: [${ep('ams', 1)}, ${ep('nyc', 2)}, ${ep('tyo', 3)}]
records:
  - { name: app.example.test, type: A, ttl: 20, service: app, health: { localFirst: true, downTtl: 5 } }
health:
  monitors: [{ name: http, type: http, intervalMs: 500, timeoutMs: 500, rise: 1, fall: 3 }]
`);
  // Every site checked up first (unknown counts as up too, but without the record's full TTL guarantee).
  await waitFor('every site checked up', () => g.health.report().endpoints.every((e) => e.status === 'up'), 20_000);
  const from = (source: string) => curl(['--interface', source, '-H', 'Host: app.example.test', `${url}/login?r=1`]);
  for (const source of Object.values(FROM)) {
    const r = await from(source);
    t.is(r.headers.get('location'), `${SITE.ams}/login?r=1`, `${source}: the local site while it is up`);
    t.is(r.headers.get('cache-control'), 'private, max-age=20');
  }
  await peers.ams.stop();
  await waitFor('the local site down', async () => (await from(FROM.nyc)).headers.get('location') !== `${SITE.ams}/login?r=1`, 20_000);
  const nyc = await from(FROM.nyc);
  t.is(nyc.headers.get('location'), `${SITE.nyc}/login?r=1`, 'the peer nearest the client');
  t.is(nyc.headers.get('cache-control'), 'private, max-age=5', 'the shorter TTL while a site is down');
  t.is((await from(FROM.tyo)).headers.get('location'), `${SITE.tyo}/login?r=1`);
  t.not((await from(FROM.ams)).headers.get('location'), `${SITE.ams}/login?r=1`);
  await peers.ams.restart();
  await waitFor('the local site back', async () => (await from(FROM.tyo)).headers.get('location') === `${SITE.ams}/login?r=1`, 20_000);
});

test('HTTPS with a test certificate; an IPv6 client is decided by the AAAA record', async (t) => {
  const certificate = await selfSignedCertificate(['www.example.test']);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-e2e-redirect-tls-'));
  writeFileSync(join(dir, 'cert.pem'), certificate.cert);
  writeFileSync(join(dir, 'key.pem'), certificate.key);
  const { url } = await start(`
listeners:
  redirect:
    address: "::1"
    port: 0
    tls: { certFile: ${join(dir, 'cert.pem')}, keyFile: ${join(dir, 'key.pem')} }
    status: 307
    hosts: [{ host: www.example.test, record: www.example.test, urls: ${URLS} }]
${ZONE}
${TOPOLOGY}
services:
  - name: web4
    endpoints: [{ dc: ams, address: 192.0.2.1 }]
  - name: web6
    endpoints: [{ dc: nyc, address: "2001:db8::2" }, { dc: tyo, address: "2001:db8::3" }]
records:
  - { name: www.example.test, type: A, ttl: 30, service: web4 }
  - { name: www.example.test, type: AAAA, ttl: 40, service: web6 }
`);
  const port = new URL(url).port;
  const r = await curl(['--cacert', join(dir, 'cert.pem'), '--resolve', `www.example.test:${port}:[::1]`, `https://www.example.test:${port}/secure?q=1`]);
  t.is(r.status, 307);
  t.is(r.headers.get('location'), `${SITE.tyo}/secure?q=1`, '::1 is in Asia; the AAAA record (nyc, tyo) decides, not the A record (ams)');
  t.is(r.headers.get('cache-control'), 'private, max-age=40');
  await t.throwsAsync(
    curl(['--resolve', `www.example.test:${port}:[::1]`, `https://www.example.test:${port}/`]),
    { message: /certificate/ },
    'a real certificate check',
  );
});

/** Sends `request` as raw bytes to the server of `url` and returns everything it answers until it closes. */
function rawRequest(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) }, () => socket.end(request));
    let reply = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (reply += chunk));
    socket.on('close', () => resolve(reply));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no reply within 10 s')));
  });
}
