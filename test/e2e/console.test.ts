import test from 'ava';
import { mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { udpQuery } from '../support/dnsClient.js';
import { REPO_ROOT } from '../support/engineProcess.js';
import { ipLocationRecord, writeMmdb } from '../support/mmdbWriter.js';

/**
 * The operator console (built by `npm run build` from `console/`) in a real browser (Debian's
 * chromium, headless, driven by puppeteer-core; never a downloaded browser), against a running
 * engine with health changing underneath. Each view: the engine's condition and reload history;
 * data centers and endpoints with status, since when, last check latency and error, overrides, and
 * the actions (a drain clicked without the token is refused and the page says so; with the token
 * the engine's `/health` shows it drained; the audit log has both); answer shares; the world map and
 * its per-(country, DC) counts; records with the answer for a client as steps; explain with a
 * what-if; replay; the cluster view. axe-core finds no serious or critical violation; the browser
 * logs no error. A foreign `Host` gets no data. Screenshots are kept in `.tmp/artifacts/console/`.
 */

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'console-token-0123456789abcdef';
const ARTIFACTS = join(REPO_ROOT, '.tmp', 'artifacts', 'console');
const dir = mkdtempSync(join(tmpdir(), 'gslbd-console-'));
const LOG = join(dir, 'gslbd.log');

let g: RunningGslbd;
let browser: Browser;
let base: string;
let monitored: Server;

test.before(async () => {
  // Answered clients: 10.1.0.0/16 in Germany, 10.2.0.0/16 in the United States (with coordinates, for the map).
  writeMmdb(join(dir, 'clients.mmdb'), 4, [
    { cidr: '10.1.0.0/16', record: ipLocationRecord('DE', 'Berlin', 'Berlin', 52.52, 13.4) },
    { cidr: '10.2.0.0/16', record: ipLocationRecord('US', 'Virginia', 'Ashburn', 39.04, -77.49) },
  ]);
  // east's endpoint is checked on this loopback port: closing it takes the endpoint down.
  monitored = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => monitored.listen(0, '127.0.0.1', resolve));
  const port = (monitored.address() as { port: number }).port;
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(
    file,
    `listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} } }
geo: { sources: [{ format: mmdb, path: clients.mmdb }] }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: east, lat: 40.7, lon: -74.0 }, { name: west, lat: 37.4, lon: -122.1 }]
services:
  - name: web
    endpoints:
      - { dc: east, address: 192.0.2.1, monitors: [tcp], check: { address: 127.0.0.1, port: ${port} } }
      - { dc: west, address: 192.0.2.2 }
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [east, west] }, failsafe: [198.51.100.1] }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: 400, timeoutMs: 300, rise: 1, fall: 1 }]
`,
  );
  g = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync(LOG, 'a') });
  base = `http://127.0.0.1:${g.admin!.port}`;
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
});
test.after.always(async () => {
  await browser?.close();
  await g?.stop();
  monitored?.close();
});

const health = async (): Promise<{ endpoints: { endpoint: string; status: string; override: string | null }[] }> =>
  (await (await fetch(`${base}/health`)).json()) as { endpoints: { endpoint: string; status: string; override: string | null }[] };
const overrideOf = async (key: string): Promise<string | null | undefined> => (await health()).endpoints.find((e) => e.endpoint === key)?.override;
const text = (page: Page, selector: string): Promise<string> => page.$eval(selector, (e) => e.textContent ?? '');
const cells = (page: Page, selector: string): Promise<string[][]> =>
  page.$$eval(selector, (rows) => rows.map((r) => [...r.querySelectorAll('td, th')].map((c) => c.textContent ?? '')));
const waitText = (page: Page, selector: string, want: string | RegExp): Promise<unknown> =>
  page.waitForFunction(
    (sel: string, w: string, isRegex: boolean) => {
      const t = document.querySelector(sel)?.textContent ?? '';
      return isRegex ? new RegExp(w).test(t) : t === w;
    },
    { timeout: 20000 },
    selector,
    typeof want === 'string' ? want : want.source,
    typeof want !== 'string',
  );
const auditLines = (): { path: string; status: number; body?: unknown }[] =>
  readFileSync(LOG, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"audit":true'))
    .map((l) => JSON.parse(l) as { path: string; status: number; body?: unknown });

async function openConsole(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/console`);
  await waitText(page, '#live', 'on');
  return { page, errors };
}

test.serial('engine, data centers, shares and the map: counts per country and DC, last check latency, condition', async (t) => {
  const { page, errors } = await openConsole();
  const key = 'web/east/192.0.2.1';
  await waitText(page, `tr[data-endpoint="${key}"] td:nth-child(8)`, /^tcp: \d+(\.\d)? ms$/);
  const dns = g.dns.bound[0]!;
  for (let i = 0; i < 3; i++) await udpQuery(dns, { name: 'www.example.test', type: 'A', edns: { ecs: '10.1.2.0/24' } });
  for (let i = 0; i < 2; i++) await udpQuery(dns, { name: 'www.example.test', type: 'A', edns: { ecs: '10.2.3.0/24' } });
  t.is(await text(page, '#condition'), 'ok');
  t.is(await text(page, '#failsafe'), 'no');
  const row = await cells(page, `tr[data-endpoint="${key}"]`);
  t.deepEqual(row[0]!.slice(3, 6), [key, 'up', '-']);
  t.regex(row[0]![6]!, /^\d{4}-\d\d-\d\dT/, 'since when');
  // Five answers, shared by the two data centers: the last minute's counts and the map's per-country counts.
  await page.waitForFunction(
    () => [...document.querySelectorAll('#share td[data-last-minute]')].reduce((n, td) => n + Number(td.getAttribute('data-last-minute')), 0) === 5,
    {
      timeout: 20000,
    },
  );
  await page.waitForFunction(
    () => [...document.querySelectorAll('#map-counts tbody tr')].reduce((n, tr) => n + Number(tr.querySelector('td:nth-child(3)')?.textContent), 0) === 5,
    { timeout: 20000 },
  );
  const perCountry = new Map<string, number>();
  for (const [country, dc, n] of await cells(page, '#map-counts tbody tr')) {
    t.true(dc === 'east' || dc === 'west', dc);
    perCountry.set(country!, (perCountry.get(country!) ?? 0) + Number(n));
  }
  t.deepEqual(
    [...perCountry].sort(([a], [b]) => a.localeCompare(b)),
    [
      ['DE', 3],
      ['US', 2],
    ],
  );
  // The map draws both data centers (configured coordinates) and both client countries.
  t.is(await page.$$eval('svg.map rect.dc', (r) => r.length), 2);
  t.deepEqual(
    await page.$$eval('svg.map g[data-country] circle', (c) =>
      c.map((x) => x.parentElement!.getAttribute('data-country') ?? '').sort((a, b) => a.localeCompare(b)),
    ),
    ['DE', 'US'],
  );
  t.true((await page.$eval('svg.map path.land', (p) => p.getAttribute('d') ?? '')).length > 1000, 'the bundled land outline is drawn');
  t.is(await text(page, '#store'), 'State store: embedded, embedded');
  await page.screenshot({ path: join(ARTIFACTS, 'console-views.png'), fullPage: true });

  // Health changes underneath: east's checked port closes; the page shows the endpoint down and the check's error.
  await new Promise<void>((resolve) => monitored.close(() => resolve()));
  await waitText(page, `tr[data-endpoint="${key}"] td:nth-child(5)`, 'down');
  await waitText(page, `tr[data-endpoint="${key}"] td:nth-child(8)`, /^tcp: \d+(\.\d)? ms, .+/);
  await page.screenshot({ path: join(ARTIFACTS, 'console-east-down.png'), fullPage: true });
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('actions: a drain without the token is refused and the page says so; with the token the engine drains; both are in the audit log', async (t) => {
  const { page, errors } = await openConsole();
  const key = 'web/west/192.0.2.2';
  await page.click(`button[aria-label="Drain ${key}"]`);
  await waitText(page, '#action-result', 'refused: the admin token is missing (type it above)');
  t.is(await overrideOf(key), null, 'nothing changed in the engine');
  await page.type('#token', 'wrong-token-0123456789');
  await page.click(`button[aria-label="Drain ${key}"]`);
  await waitText(page, '#action-result', /^refused: wrong admin token/);
  t.is(await overrideOf(key), null);

  await page.$eval('#token', (e) => ((e as HTMLInputElement).value = ''));
  await page.type('#token', TOKEN);
  await page.click(`button[aria-label="Drain ${key}"]`);
  await waitText(page, '#action-result', `drain: ${key}`);
  t.is(await overrideOf(key), 'drain', "the engine's /health shows it drained");
  await waitText(page, `tr[data-endpoint="${key}"] td:nth-child(6)`, 'drain');
  await page.screenshot({ path: join(ARTIFACTS, 'console-drained.png'), fullPage: true });

  // A data center's action covers every endpoint of it; clear undoes it.
  await page.click('button[aria-label="Clear every endpoint of west"]');
  await waitText(page, '#action-result', 'cleared: data center west');
  t.is(await overrideOf(key), null);
  await page.click('#reload');
  await waitText(page, '#reload-result', /^reloaded: generation \d+$/);
  await waitText(page, '#reloads tbody tr:first-child td:nth-child(2)', 'admin API');

  const audit = auditLines().filter((l) => l.path === '/health/override');
  t.deepEqual(
    audit.map((l) => [l.status, l.body ?? null]),
    [
      [401, null],
      [401, null],
      [200, { endpoint: key, override: 'drain' }],
      [200, { dc: 'west', override: 'none' }],
    ],
  );
  t.true(auditLines().some((l) => l.path === '/reload' && l.status === 200));
  // The browser logs the two refused requests, and nothing else.
  t.deepEqual(errors, Array(2).fill('Failed to load resource: the server responded with a status of 401 (Unauthorized)'));
  await page.close();
});

test.serial('records, explain with a what-if, replay and accessibility', async (t) => {
  const { page, errors } = await openConsole();
  // east is down (its checked port closed in the first test): west answers.
  await page.waitForSelector('#records tr[data-record="www.example.test A"]', { timeout: 20000 });
  const rec = (await cells(page, '#records tr[data-record="www.example.test A"]'))[0]!;
  t.deepEqual(rec.slice(0, 3), ['www.example.test', 'A', 'web']);
  t.regex(rec[3]!, /gate: health.*rank: static-proximity/);
  t.is(rec[4], 'east: web/east/192.0.2.1west: web/west/192.0.2.2');
  await page.type('#r-client', '10.1.2.3');
  await page.click('#records tr[data-record="www.example.test A"] button');
  await page.waitForSelector('#record-answer .answers li', { timeout: 20000 });
  t.deepEqual(await page.$$eval('#record-answer .answers li', (l) => l.map((x) => x.textContent)), ['www.example.test. 30 IN A 192.0.2.2']);
  t.true((await page.$$eval('#record-answer ol.steps li', (l) => l.map((x) => x.textContent ?? ''))).some((s) => s.includes('down')));

  // What if west were down too: every endpoint out, the fail-safe answers.
  await page.type('#x-name', 'www.example.test');
  await page.type('#x-client', '10.2.0.1');
  await page.click('input[name="x-down"][value="west"]');
  await page.click('#explain button[type="submit"]');
  await waitText(page, '#what-if-changed', 'The answer changes under the hypothesis.');
  t.deepEqual(await page.$$eval('#trace-live .answers li', (l) => l.map((x) => x.textContent)), ['www.example.test. 30 IN A 192.0.2.2']);
  t.deepEqual(await page.$$eval('#trace-what-if .answers li', (l) => l.map((x) => x.textContent)), ['www.example.test. 30 IN A 198.51.100.1']);
  await page.screenshot({ path: join(ARTIFACTS, 'console-what-if.png'), fullPage: true });

  // Replay three queries with west down: all move from west to none (the fail-safe names no data center).
  await page.type('#r-queries', 'www.example.test A 10.1.0.1\nwww.example.test 10.2.0.1\nwww.example.test A 192.0.2.77');
  await page.click('input[name="r-down"][value="west"]');
  await page.type('#r-capacity', 'west=50%');
  await page.click('#replay button[type="submit"]');
  await page.waitForSelector('#replay-moves tbody tr', { timeout: 20000 });
  t.deepEqual(await cells(page, '#replay-shares tbody tr'), [
    ['-', '0 %', '100 %', ''],
    ['west', '100 %', '0 %', '50 % (over capacity)'],
  ]);
  t.deepEqual(await cells(page, '#replay-moves tbody tr'), [['west → -', '3']]);
  t.deepEqual(await cells(page, '#replay-failsafe tbody tr'), [['www.example.test/A', '0', '3']]);
  await page.screenshot({ path: join(ARTIFACTS, 'console-replay.png'), fullPage: true });

  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
    return (await axe.run()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
  });
  t.deepEqual(violations, []);
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('a request with a foreign Host gets no data (DNS rebinding)', async (t) => {
  const get = (path: string, host: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: g.admin!.port, path, headers: { host } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
  for (const path of ['/console', '/console/app.js', '/console/state', '/console/records', '/console/events']) {
    const r = await get(path, 'attacker.example:8053');
    t.is(r.status, 403, path);
    t.false(r.body.includes('web/east'), path);
  }
  const ok = await get('/console/state', `localhost:${g.admin!.port}`);
  t.is(ok.status, 200);
  t.true(ok.body.includes('web/east/192.0.2.1'));
});
