import test from 'ava';
import { mkdirSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { udpQuery } from '../support/dnsClient.js';
import { REPO_ROOT } from '../support/engineProcess.js';

/**
 * The operator console in a real browser (Debian's chromium, headless, driven by puppeteer-core;
 * never a downloaded browser): the page shows the engine's condition, every endpoint with its
 * status, override and since when, answers per data center, and updates live (server-sent events)
 * when an override changes health underneath; the explain form renders the trace as steps; axe-core
 * finds no serious or critical accessibility violation; the browser logs no error. A foreign `Host`
 * gets no data. Screenshots are kept in `.tmp/artifacts/console/`.
 */

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'console-token-0123456789abcdef';
const ARTIFACTS = join(REPO_ROOT, '.tmp', 'artifacts', 'console');
const dir = mkdtempSync(join(tmpdir(), 'gslbd-console-'));

let g: RunningGslbd;
let browser: Browser;
let base: string;

test.before(async () => {
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(
    file,
    `listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { address: 127.0.0.1, port: 0, token: ${TOKEN} } }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: east }, { name: west }]
services: [{ name: web, endpoints: [{ dc: east, address: 192.0.2.1 }, { dc: west, address: 192.0.2.2 }] }]
records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [east, west] }, failsafe: [198.51.100.1] }
`,
  );
  g = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  base = `http://127.0.0.1:${g.admin!.port}`;
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
});
test.after.always(async () => {
  await browser?.close();
  await g?.stop();
});

const override = (body: unknown, token?: string): Promise<Response> =>
  fetch(`${base}/health/override`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

test.serial('the console shows endpoints, answers per DC and the condition, updates live as health changes, and explains a query as steps', async (t) => {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}/console`);
  await page.waitForFunction(() => document.getElementById('live')?.textContent === 'on', { timeout: 20000 });
  for (let i = 0; i < 5; i++) await udpQuery(g.dns.bound[0]!, { name: 'www.example.test', type: 'A' });
  t.is(await page.$eval('#condition', (e) => e.textContent), 'ok');
  const row = (key: string): Promise<string[]> => page.$$eval(`tr[data-endpoint="${key}"] td`, (tds) => tds.map((td) => td.textContent ?? ''));
  t.deepEqual((await row('web/east/192.0.2.1')).slice(-4), ['web/east/192.0.2.1', 'up', '-', '-']);
  // The two data centers share the answers (same rank, rotation): 5 in all over the last minute.
  await page.waitForFunction(
    () => ['east', 'west'].reduce((n, dc) => n + Number(document.querySelector(`tr[data-dc="${dc}"] td:nth-child(3)`)?.textContent), 0) === 5,
    { timeout: 20000 },
  );
  await page.screenshot({ path: join(ARTIFACTS, 'console-up.png') });

  // Health changes underneath (an override with the token): the page follows without a reload.
  t.is((await override({ dc: 'east', override: 'force-down' })).status, 401, 'refused without the token');
  t.is((await override({ dc: 'east', override: 'force-down' }, TOKEN)).status, 200);
  await page.waitForFunction(() => document.querySelector('tr[data-endpoint="web/east/192.0.2.1"] td:nth-child(6)')?.textContent === 'force-down', {
    timeout: 20000,
  });
  t.regex(await page.$eval('#generation', (e) => e.textContent ?? ''), /^\d+$/);
  await page.screenshot({ path: join(ARTIFACTS, 'console-east-forced-down.png') });

  await page.type('#x-name', 'www.example.test');
  await page.type('#x-client', '192.0.2.55');
  await page.click('#explain button');
  await page.waitForSelector('#answers li', { timeout: 20000 });
  t.deepEqual(await page.$$eval('#answers li', (lis) => lis.map((li) => li.textContent)), ['www.example.test. 30 IN A 192.0.2.2']);
  const steps = await page.$$eval('ol.steps li', (lis) => lis.map((li) => li.textContent ?? ''));
  t.true(steps.length >= 3, steps.join('\n'));
  t.true(
    steps.some((s) => s.includes('forced down')),
    'the gate step says why east is out',
  );
  await page.screenshot({ path: join(ARTIFACTS, 'console-explain.png'), fullPage: true });

  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }).axe;
    return (await axe.run()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
  });
  t.deepEqual(violations, []);
  t.deepEqual(errors, []);
  await page.close();
  t.is((await override({ dc: 'east', override: 'none' }, TOKEN)).status, 200);
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
  for (const path of ['/console', '/console/state', '/console/events']) {
    const r = await get(path, 'attacker.example:8053');
    t.is(r.status, 403, path);
    t.false(r.body.includes('web/east'), path);
  }
  const ok = await get('/console/state', `localhost:${g.admin!.port}`);
  t.is(ok.status, 200);
  t.true(ok.body.includes('web/east/192.0.2.1'));
});
