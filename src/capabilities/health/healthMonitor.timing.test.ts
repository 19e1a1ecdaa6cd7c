import test from 'ava';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { parseConfigText } from '../../process/loadConfig.js';
import { createLogger } from '../../core/telemetry/logger.js';
import type { HealthView } from '../../core/views/healthView.js';
import { startHttpPeer, startTcpPeer } from '../../../test/health/loopbackPeers.js';
import { sleep, waitFor } from '../../../test/support/waitFor.js';
import { applyResult, unknownCheckState } from './checkState.js';
import { HealthMonitor } from './healthMonitor.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

const log = createLogger('silent');
const INTERVAL = 100;

/** A configuration whose endpoints are checked on the given TCP ports (rise/fall as given). */
function config(ports: number[], opts: { rise?: number; fall?: number; stateFile?: string; maxAgeMs?: number; dcPoints?: string; timeoutMs?: number } = {}) {
  const endpoints = ports
    .map((p, i) => `      - { dc: dc1, address: 192.0.2.${i + 1}, monitors: [tcp], check: { address: 127.0.0.1, port: ${p} } }`)
    .join('\n');
  return parseConfigText(`
${EXAMPLE_ZONE}
datacenters:
  - { name: dc1${opts.dcPoints ?? ''} }
services:
  - name: web
    endpoints:
${endpoints}
health:
  ${opts.stateFile ? `stateFile: ${opts.stateFile}` : ''}
  ${opts.maxAgeMs !== undefined ? `stateMaxAgeMs: ${opts.maxAgeMs}` : ''}
  monitors:
    - { name: tcp, type: tcp, intervalMs: ${INTERVAL}, timeoutMs: ${opts.timeoutMs ?? 100}, rise: ${opts.rise ?? 2}, fall: ${opts.fall ?? 2}, jitter: 0.1 }
`);
}

const key = (i: number) => `web/dc1/192.0.2.${i + 1}`;
const statusOf = (m: HealthMonitor, i: number) => m.view.endpointHealth(key(i)).status;

async function closedPort(): Promise<number> {
  const p = await startTcpPeer();
  await p.stop();
  return p.port;
}

test('transitions follow rise/fall with real listeners: stopped is out after fall failures, back after rise successes', async (t) => {
  const peer = await startTcpPeer();
  const outcomes: boolean[] = [];
  const m = new HealthMonitor({ log, onCheck: (_id, o) => outcomes.push(o.ok) });
  t.teardown(() => m.stop());
  // onCheck runs just before a result is applied, so at a publish `outcomes` holds exactly the
  // results the published state comes from.
  const changes: { status: string; results: number }[] = [];
  m.onChange((v) => changes.push({ status: v.endpointHealth(key(0)).status, results: outcomes.length }));
  const initial = m.configure(config([peer.port], { rise: 2, fall: 3 }), '/tmp/x.yaml');
  t.is(initial.endpointHealth(key(0)).status, 'unknown');
  m.start();
  await waitFor('up', () => statusOf(m, 0) === 'up', 10_000);
  // Steady state: checks keep running.
  await sleep(5 * INTERVAL);
  const upChanges = changes.length;

  await peer.stop();
  await waitFor('down after the listener stopped', () => statusOf(m, 0) === 'down', 10_000);
  await sleep(4 * INTERVAL);
  t.is(statusOf(m, 0), 'down', 'stays down while the listener is stopped');
  t.is(changes.length, upChanges + 1, 'one publish for up → down, none while it stays down');

  await peer.restart();
  await waitFor('up after restart', () => statusOf(m, 0) === 'up', 10_000);
  await peer.stop();

  // A check to the live listener that times out on a loaded machine is a real failure to the
  // monitor, so the published states are compared with the rise/fall rule (first result decides,
  // down after fall = 3 failures in a row, up after rise = 2 successes in a row) applied to the
  // results as they came, not to an ideal sequence.
  const replay = unknownCheckState(0);
  const ruleAfter: string[] = ['unknown'];
  outcomes.forEach((ok, i) => {
    applyResult(replay, ok, i + 1, 2, 3);
    ruleAfter.push(replay.status);
  });
  changes.forEach(({ status, results }, i) => {
    t.is(status, ruleAfter[results] ?? 'no such result', `publish ${i} (after ${results} results) is the rule's state`);
    if (i > 0) t.not(status, changes[i - 1]!.status, `publish ${i} changes the status`);
  });
  t.is(changes[0]!.status, outcomes[0] ? 'up' : 'down', 'the first result decides');
  t.deepEqual(
    changes.slice(-3).map((c) => c.status),
    ['up', 'down', 'up'],
  );
});

test('an endpoint whose check alternates up/down every probe does not flap with rise/fall 2/2', async (t) => {
  const peer = await startHttpPeer();
  let n = 0;
  // The HTTP peer answers 200 and 503 in turn: every other check fails.
  const yaml = `
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: dc1 }]
services:
  - name: web
    endpoints:
      - { dc: dc1, address: 192.0.2.1, monitors: [http], check: { address: 127.0.0.1, port: ${peer.port} } }
health:
  monitors: [{ name: http, type: http, intervalMs: 100, timeoutMs: 100, rise: 2, fall: 2, jitter: 0 }]
`;
  const origin = peer.behaviour;
  Object.defineProperty(origin, 'status', { get: () => (n++ % 2 === 0 ? 200 : 503) });
  const outcomes: boolean[] = [];
  const m = new HealthMonitor({ log, onCheck: (_id, o) => outcomes.push(o.ok) });
  t.teardown(() => m.stop());
  let changes = 0;
  m.onChange(() => changes++);
  m.configure(parseConfigText(yaml), '/tmp/x.yaml');
  m.start();
  // Skip the start, where a loaded machine may time out a check or two, then watch 20 probes.
  await waitFor('10 results', () => outcomes.length >= 10, 15_000);
  const from = outcomes.length;
  const changesBefore = changes;
  const statusBefore = m.view.endpointHealth('web/dc1/192.0.2.1').status;
  await waitFor('20 more results', () => outcomes.length >= from + 20, 15_000);
  await sleep(20);
  const window = outcomes.slice(from - 1, from + 20);
  const alternating = window.every((ok, i) => i === 0 || ok !== window[i - 1]);
  if (alternating) {
    t.is(changes, changesBefore, 'no state change while the results alternate');
    t.is(m.view.endpointHealth('web/dc1/192.0.2.1').status, statusBefore);
  } else {
    // A check timed out on the loaded machine: the published changes must still be exactly
    // those the rise/fall rule gives for the whole sequence.
    t.log(`results were not strictly alternating: ${outcomes.map((x) => (x ? '+' : '-')).join('')}`);
  }
  const replay = unknownCheckState(0);
  let expected = 0;
  outcomes.slice(0, outcomes.length).forEach((ok, i) => (expected += applyResult(replay, ok, i + 1, 2, 2) ? 1 : 0));
  t.is(changes, expected);
  await peer.stop();
});

test('the state file carries last-known state across a restart; an old one starts unknown; overrides persist', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-health-'));
  const stateFile = join(dir, 'health.json');
  const live = await startTcpPeer();
  const dead = await closedPort();
  const first = new HealthMonitor({ log });
  first.configure(config([live.port, dead], { stateFile }), join(dir, 'gslbd.yaml'));
  first.start();
  await waitFor('both decided', () => statusOf(first, 0) === 'up' && statusOf(first, 1) === 'down', 8000);
  first.setOverride(key(0), 'drain');
  await first.stop();
  const saved = JSON.parse(readFileSync(stateFile, 'utf8'));
  t.is(saved.version, 1);
  t.deepEqual(saved.overrides, { [key(0)]: 'drain' });
  t.is(Object.values(saved.checks).length, 2);

  // Restart within the age limit: the view is decided before any check runs.
  const second = new HealthMonitor({ log });
  const view = second.configure(config([live.port, dead], { stateFile }), join(dir, 'gslbd.yaml'));
  t.like(view.endpointHealth(key(0)), { status: 'up', override: 'drain' });
  t.like(view.endpointHealth(key(1)), { status: 'down' });
  t.like(second.report().stateFile.atStart, { used: true });
  await second.stop();

  // The same file, aged past the limit: checks start unknown, the override stays.
  const old = JSON.parse(readFileSync(stateFile, 'utf8'));
  old.writtenAtMs -= 600_000;
  writeFileSync(stateFile, JSON.stringify(old));
  const third = new HealthMonitor({ log });
  const aged = third.configure(config([live.port, dead], { stateFile, maxAgeMs: 300_000 }), join(dir, 'gslbd.yaml'));
  t.like(aged.endpointHealth(key(0)), { status: 'unknown', override: 'drain' });
  t.like(aged.endpointHealth(key(1)), { status: 'unknown' });
  t.like(third.report().stateFile.atStart, { used: false });
  t.true((third.report().stateFile.atStart.ageMs ?? 0) >= 600_000);

  // A corrupt file is reported and ignored.
  writeFileSync(stateFile, '{"version": 1, "broken');
  const fourth = new HealthMonitor({ log });
  fourth.configure(config([live.port, dead], { stateFile }), join(dir, 'gslbd.yaml'));
  t.like(fourth.report().stateFile.atStart, { used: false });
  t.regex(fourth.report().stateFile.atStart.reason ?? '', /not JSON/);
  await Promise.all([third.stop(), fourth.stop(), live.stop()]);
});

test('reconfigure keeps the state of unchanged checks and starts new ones unknown', async (t) => {
  const a = await startTcpPeer();
  const b = await startTcpPeer();
  const m = new HealthMonitor({ log });
  t.teardown(() => m.stop());
  m.configure(config([a.port]), '/tmp/x.yaml');
  m.start();
  await waitFor('up', () => statusOf(m, 0) === 'up', 8000);
  const view = m.configure(config([a.port, b.port]), '/tmp/x.yaml');
  t.is(view.endpointHealth(key(0)).status, 'up');
  t.is(view.endpointHealth(key(1)).status, 'unknown');
  await waitFor('new one up', () => statusOf(m, 1) === 'up', 8000);
  await Promise.all([a.stop(), b.stop()]);
});

test('overrides publish at once, unknown keys are refused, and none clears', async (t) => {
  const a = await startTcpPeer();
  const m = new HealthMonitor({ log });
  t.teardown(() => m.stop());
  m.configure(config([a.port]), '/tmp/x.yaml');
  const seen: HealthView[] = [];
  m.onChange((v) => seen.push(v));
  const v = m.setOverride(key(0), 'force-down');
  t.is(seen.length, 1);
  t.is(seen[0], v);
  t.is(v.endpointHealth(key(0)).override, 'force-down');
  t.false(v.endpointUp({ key: key(0), dc: { name: 'dc1' } } as never));
  t.throws(() => m.setOverride('web/dc1/203.0.113.1', 'drain'), { instanceOf: RangeError });
  t.is(m.setOverride(key(0), 'none').endpointHealth(key(0)).override, undefined);
  await a.stop();
});

test('data center status from WAN and LAN check points (rule any: one WAN point is enough, the LAN point down takes the DC down) and service status', async (t) => {
  const wan1 = await startTcpPeer();
  const wan2 = await startTcpPeer();
  const lan = await startTcpPeer();
  const svc = await startTcpPeer();
  t.teardown(() => Promise.all([wan1, wan2, lan, svc].map((p) => p.stop().catch(() => {}))));
  const points = `, checkPoints: { rule: any, wan: [{ monitor: tcp, address: 127.0.0.1, port: ${wan1.port} }, { monitor: tcp, address: 127.0.0.1, port: ${wan2.port} }], lan: [{ monitor: tcp, address: 127.0.0.1, port: ${lan.port} }] }`;
  const m = new HealthMonitor({ log });
  t.teardown(() => m.stop());
  t.is(m.configure(config([svc.port], { dcPoints: points, fall: 1, rise: 1 }), '/tmp/x.yaml').hostStatus('dc1'), 'unknown');
  m.start();
  await waitFor('dc and service up', () => m.view.hostStatus('dc1') === 'up' && m.view.serviceStatus('web', 'dc1') === 'up', 8000);
  t.is(m.view.serviceStatus('web', 'elsewhere'), 'down');
  await wan1.stop();
  await sleep(4 * INTERVAL);
  t.is(m.view.hostStatus('dc1'), 'up', 'any WAN point up is enough');
  await lan.stop();
  await waitFor('dc down when the LAN point fails', () => m.view.hostStatus('dc1') === 'down', 8000);
  t.like(m.report().datacenters[0], { dc: 'dc1', status: 'down', rule: 'any' });
  await svc.stop();
  await waitFor('service down', () => m.view.serviceStatus('web', 'dc1') === 'down', 8000);
  await wan2.stop();
});

test('Prometheus metrics: state per endpoint, transitions, check latency, time since last success', async (t) => {
  const a = await startTcpPeer();
  const registry = new Registry();
  const m = new HealthMonitor({ log, registry });
  t.teardown(() => m.stop());
  m.configure(config([a.port]), '/tmp/x.yaml');
  m.start();
  await waitFor('up', () => statusOf(m, 0) === 'up', 8000);
  const text = await registry.metrics();
  t.regex(text, /gslbd_health_endpoint_status\{endpoint="web\/dc1\/192\.0\.2\.1"\} 1/);
  t.regex(text, /gslbd_health_transitions_total\{endpoint="web\/dc1\/192\.0\.2\.1",to="up"\} 1/);
  t.regex(text, /gslbd_health_check_duration_seconds_count\{monitor="tcp",result="ok"\} [1-9]/);
  const since = /gslbd_health_check_seconds_since_success\{check="tcp@127\.0\.0\.1:\d+",monitor="tcp"\} ([0-9.e-]+)/.exec(text);
  t.truthy(since);
  t.true(Number(since![1]) < 2);
  t.notRegex(text, /192\.0\.2\.200|client/);
  await a.stop();
});

test("a reload that changes a monitor keeps its checks' last status until the new definition's first result, which decides at once", async (t) => {
  const peer = await startTcpPeer();
  await peer.stop();
  const results: boolean[] = [];
  const m = new HealthMonitor({ log, onCheck: (_id, o) => results.push(o.ok) });
  t.teardown(() => m.stop());
  m.configure(config([peer.port], { rise: 3, fall: 2 }), '/tmp/x.yaml');
  m.start();
  await waitFor('down', () => statusOf(m, 0) === 'down', 10_000);

  // Same target, another timeout: a new definition of the same check.
  const view = m.configure(config([peer.port], { rise: 3, fall: 2, timeoutMs: 90 }), '/tmp/x.yaml');
  t.is(view.endpointHealth(key(0)).status, 'down', 'still down right after the reload, not unknown (which would answer it)');
  const check = m.report().checks[0]!;
  t.is(check.status, 'down');

  await peer.restart();
  t.teardown(() => peer.stop());
  const firstSuccess = results.length;
  await waitFor('up', () => statusOf(m, 0) === 'up', 10_000);
  const successes = results.slice(firstSuccess).filter((ok) => ok).length;
  t.true(successes >= 1 && successes < 3, `up after ${successes} successes of the new definition, not rise = 3`);

  // Once decided, rise/fall apply again: a target change (a new check) starts unknown as before.
  const other = await closedPort();
  t.is(m.configure(config([other], { rise: 3, fall: 2, timeoutMs: 90 }), '/tmp/x.yaml').endpointHealth(key(0)).status, 'unknown');
});

test('a reload that removes an endpoint drops its override with a warning naming both; the endpoint comes back without it', async (t) => {
  const lines: { level: number; msg: string; endpoint?: string; override?: string }[] = [];
  const captured = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const [a, b] = [await closedPort(), await closedPort()];
  const m = new HealthMonitor({ log: captured });
  t.teardown(() => m.stop());
  m.configure(config([a, b]), '/tmp/x.yaml');
  m.setOverride(key(1), 'force-down');
  m.configure(config([a]), '/tmp/x.yaml');
  t.deepEqual(
    lines.filter((l) => l.msg.startsWith('administrative override dropped')).map((l) => [l.level, l.endpoint, l.override]),
    [[40, key(1), 'force-down']],
  );
  t.is(m.configure(config([a, b]), '/tmp/x.yaml').endpointHealth(key(1)).override, undefined);
});
