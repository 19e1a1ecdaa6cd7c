import test from 'ava';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { buildHealthPlan } from './healthPlan.js';
import { HealthMonitor } from './healthMonitor.js';
import { systemSchedulerClock } from './scheduler.js';
import { readStateFile, writeStateFile, type SavedState } from './stateFile.js';

const NOW = Date.UTC(2026, 10, 30, 15, 0, 0, 0);
const STAMP = '2026-11-30T15-00-00-000Z';
const KEY = 'web/dc1/192.0.2.1';

const tempDir = () => mkdtempSync(join(tmpdir(), 'gslbd-state-'));

/** A saved state with one endpoint up and forced down, written `ageMs` before NOW. */
function saved(ageMs: number, checkId: string, fingerprint: string): SavedState {
  return {
    version: 1,
    writtenAtMs: NOW - ageMs,
    checks: { [checkId]: { fingerprint, status: 'up', sinceMs: NOW - ageMs - 1000, lastSuccessMs: NOW - ageMs } },
    overrides: { [KEY]: 'force-down' },
  };
}

/** One endpoint checked by TCP; the monitor is never started, so no check runs. */
const config = (stateFile: string) =>
  parseConfigText(`
${EXAMPLE_ZONE}
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints:
      - { dc: dc1, address: 192.0.2.1, monitors: [tcp], check: { address: 127.0.0.1, port: 9 } }
health:
  stateFile: ${stateFile}
  stateMaxAgeMs: 300000
  monitors: [{ name: tcp, type: tcp, intervalMs: 1000, timeoutMs: 500 }]
`);

/** A monitor at NOW whose log lines are collected as objects. */
function monitor() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const m = new HealthMonitor({ log, clock: { ...systemSchedulerClock, now: () => NOW }, stateWriteDelayMs: 5 });
  const warnings = () => lines.filter((l) => l.level === 40);
  return { m, lines, warnings };
}

test('readStateFile: missing is none; empty, truncated, random bytes and a wrong version are unusable with a keep-aside path', (t) => {
  const dir = tempDir();
  const path = join(dir, 'health.json');
  t.deepEqual(readStateFile(path, NOW, 300_000), { kind: 'none', reason: 'no state file yet' });
  const cases: [string | Buffer, RegExp][] = [
    ['', /^not JSON: Unexpected end of JSON input$/],
    ['{"version": 1, "writtenAtMs": 5, "chec', /^not JSON: /],
    [Buffer.from([0x8f, 0x00, 0xff, 0x13, 0x37, 0xc3]), /^not JSON: /],
    [JSON.stringify({ ...saved(0, 'x', 'y'), version: 2 }), /^not a gslbd health state file: version: /],
    ['[]', /^not a gslbd health state file: file: /],
  ];
  for (const [content, reason] of cases) {
    writeFileSync(path, content);
    const r = readStateFile(path, NOW, 300_000);
    t.like(r, { kind: 'unusable', path, keepAsidePath: `${path}.corrupt-${STAMP}` });
    t.regex((r as { reason: string }).reason, reason);
  }
  // A directory at the path cannot be read and is never moved aside.
  const r = readStateFile(dir, NOW, 300_000);
  t.like(r, { kind: 'unusable', path: dir });
  t.is((r as { reason: string }).reason, 'is not a regular file (a directory)');
  t.false('keepAsidePath' in r);
});

test('readStateFile: check states are used from 60 s in the future to stateMaxAgeMs in the past, overrides at any age', (t) => {
  const path = join(tempDir(), 'health.json');
  const expect: [number, boolean][] = [
    [-60_001, false],
    [-60_000, true],
    [-1, true],
    [0, true],
    [300_000, true],
    [300_001, false],
  ];
  for (const [ageMs, used] of expect) {
    writeFileSync(path, JSON.stringify(saved(ageMs, 'c', 'f')));
    t.like(readStateFile(path, NOW, 300_000), { kind: 'loaded', ageMs, statusesUsed: used, state: { overrides: { [KEY]: 'force-down' } } }, `age ${ageMs} ms`);
  }
});

test('writeStateFile: a failed write removes its temporary file', async (t) => {
  const dir = tempDir();
  const target = join(dir, 'health.json');
  mkdirSync(join(target, 'inside'), { recursive: true });
  await t.throwsAsync(writeStateFile(target, saved(0, 'c', 'f')), { code: 'EISDIR' });
  t.deepEqual(readdirSync(dir), ['health.json']);
  t.deepEqual(readdirSync(target), ['inside']);
});

test('a corrupt state file is a warning; it is kept aside once, byte for byte, before the first new state is written', async (t) => {
  const dir = tempDir();
  const path = join(dir, 'health.json');
  const corrupt = `${JSON.stringify(saved(0, 'c', 'f')).slice(0, 60)}`;
  writeFileSync(path, corrupt);
  const { m, warnings, lines } = monitor();
  const view = m.configure(config(path), join(dir, 'gslbd.yaml'));
  t.like(view.endpointHealth(KEY), { status: 'unknown', override: undefined });
  t.deepEqual(
    warnings().map((l) => [l.msg.split(':')[0], l.path, l.keptAs]),
    [['health state file unusable', path, `${path}.corrupt-${STAMP}`]],
  );
  t.regex(warnings()[0]!.reason as string, /^not JSON: /);
  t.like(m.report().stateFile.atStart, { used: false, keptAs: `${path}.corrupt-${STAMP}` });
  t.is(readFileSync(path, 'utf8'), corrupt, 'untouched until the engine writes');

  m.setOverride(KEY, 'drain');
  await new Promise((r) => setTimeout(r, 100));
  m.setOverride(KEY, 'force-up');
  await m.stop();
  t.deepEqual(readdirSync(dir).sort(), ['health.json', `health.json.corrupt-${STAMP}`]);
  t.is(readFileSync(`${path}.corrupt-${STAMP}`, 'utf8'), corrupt);
  t.deepEqual(JSON.parse(readFileSync(path, 'utf8')).overrides, { [KEY]: 'force-up' });
  t.deepEqual(
    lines.filter((l) => l.keptAs !== undefined).map((l) => [l.level, l.msg]),
    [
      [40, warnings()[0]!.msg],
      [40, 'unusable health state file kept aside before writing a new one'],
    ],
  );
});

test('a missing state file stays an info line and nothing is kept aside', async (t) => {
  const dir = tempDir();
  const path = join(dir, 'health.json');
  const { m, warnings, lines } = monitor();
  m.configure(config(path), join(dir, 'gslbd.yaml'));
  await m.stop();
  t.deepEqual(warnings(), []);
  t.like(lines[0], { level: 30, msg: 'health state file not used', path, reason: 'no state file yet' });
  t.deepEqual(readdirSync(dir), ['health.json']);
});

test('a state file from more than 60 s in the future: checks start unknown, overrides kept, a warning gives the offset', async (t) => {
  const dir = tempDir();
  const path = join(dir, 'health.json');
  const [check] = [...buildHealthPlan(config(path)).checks.values()];
  writeFileSync(path, JSON.stringify(saved(-61_000, check!.id, check!.fingerprint)));
  const { m, warnings } = monitor();
  t.like(m.configure(config(path), join(dir, 'gslbd.yaml')).endpointHealth(KEY), { status: 'unknown', override: 'force-down' });
  t.deepEqual(
    warnings().map((l) => [l.msg, l.aheadMs, l.toleranceMs]),
    [['health state file written in the future (clock went back?): checks start unknown (overrides kept)', 61_000, 60_000]],
  );
  t.like(m.report().stateFile.atStart, { used: false, ageMs: -61_000 });
  await m.stop();

  // Within the tolerance the same file is used.
  writeFileSync(path, JSON.stringify(saved(-59_000, check!.id, check!.fingerprint)));
  const { m: near, warnings: nearWarnings } = monitor();
  t.like(near.configure(config(path), join(dir, 'gslbd.yaml')).endpointHealth(KEY), { status: 'up', override: 'force-down' });
  t.deepEqual(nearWarnings(), []);
  await near.stop();
});

test('a directory at the state file path: one warning without a stack for many failed writes, no temporary file left, the directory not moved', async (t) => {
  const dir = tempDir();
  const path = join(dir, 'health.json');
  mkdirSync(join(path, 'inside'), { recursive: true });
  const { m, warnings } = monitor();
  m.configure(config(path), join(dir, 'gslbd.yaml'));
  for (let i = 0; i < 10; i++) {
    m.setOverride(KEY, i % 2 === 0 ? 'drain' : 'none');
    await new Promise((r) => setTimeout(r, 20));
  }
  await m.stop();
  const w = warnings();
  t.is(w.length, 2, w.map((l) => l.msg).join(' | '));
  t.like(w[0], { msg: 'health state file unusable: checks start unknown, its overrides are not applied', path, keptAs: undefined });
  t.like(w[1], { msg: 'cannot write the health state file (retried at each change; logged again when the error changes)', path, err: undefined });
  t.regex(w[1]!.error as string, /^EISDIR/);
  t.deepEqual(readdirSync(dir), ['health.json']);
  t.deepEqual(readdirSync(path), ['inside']);
});
