import test from 'ava';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { REPO_ROOT } from '../support/engineProcess.js';
import { startRedis, stopAllRedis } from '../support/redisServer.js';
import { sharedConfig, startSharedEngine } from '../support/sharedDeployment.js';

/**
 * The console's cluster view on a real shared deployment (the console issue's "reload history …
 * and — once shared state exists — the nodes"; the shared-state issue's "/status and the console
 * show the cluster"): two engines on one real redis-server, node b running another configuration
 * (a different TTL). Node a's console, in Debian's chromium, shows the Redis store connected and
 * both nodes with their configuration hashes, b's marked as not the configuration a runs.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(REPO_ROOT, '.tmp', 'artifacts', 'console');

test.after.always(() => stopAllRedis());

test('the cluster view lists the nodes sharing the Redis store, and the node whose configuration differs', async (t) => {
  const redis = await startRedis();
  const config = (node: string): string => sharedConfig(`{ url: "${redis.url}", node: ${node}, namespace: console, connectTimeoutSeconds: 5 }`);
  const a = await startSharedEngine(t, config('a'));
  await startSharedEngine(t, config('b').replace('ttl: 30', 'ttl: 60'));
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${a.admin!.port}/console`);
  await page.waitForFunction(() => document.querySelector('#store')?.textContent === 'State store: redis, connected', { timeout: 20000 });
  await page.waitForFunction(() => document.querySelectorAll('#nodes tbody tr').length === 2, { timeout: 20000 });
  const table = await page.$$eval('#nodes tr', (rows) => rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => c.textContent ?? '')));
  const header = table[0]!;
  const byNode = new Map(table.slice(1).map((row) => [row[header.indexOf('node')]!, row]));
  t.deepEqual([...byNode.keys()].sort(), ['a', 'b']);
  const column = (node: string, key: string): string => byNode.get(node)![header.indexOf(key)]!;
  t.is(column('a', 'sameConfig'), 'true');
  t.is(column('b', 'sameConfig'), 'false', 'b runs another configuration: the view says so');
  t.regex(column('a', 'configHash'), /^[0-9a-f]{16}$/);
  t.not(column('a', 'configHash'), column('b', 'configHash'));
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, 'console-cluster.png'), fullPage: true });
  t.deepEqual(errors, []);
});
