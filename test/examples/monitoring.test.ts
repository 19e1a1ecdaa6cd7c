import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startGslbd } from '../../src/process/gslbdProcess.js';
import { REPO_ROOT } from '../support/engineProcess.js';

/**
 * The monitoring examples (`examples/monitoring/`): every `gslbd_*` metric the Grafana dashboard
 * and the Prometheus alert rules name exists in the `/metrics` of a real engine (with the DNS,
 * PowerDNS and admin listeners, health monitors, a multi-source record); the rules pass
 * `promtool check rules` and their unit tests (`promtool test rules`, Debian `prometheus`).
 */

const DIR = join(REPO_ROOT, 'examples', 'monitoring');
const dir = mkdtempSync(join(tmpdir(), 'gslbd-monitoring-'));

/** The `gslbd_*` names in PromQL expressions, histogram series folded to their family. */
function metricNames(exprs: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const e of exprs) for (const m of e.matchAll(/\bgslbd_[a-z0-9_]+/g)) names.add(m[0].replace(/_(bucket|sum|count)$/, ''));
  return names;
}

/** Metric families (`# TYPE name kind`) of a real engine's /metrics. */
async function exported(): Promise<Set<string>> {
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(
    file,
    `listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  powerdns: { path: pdns.sock }
  admin: { address: 127.0.0.1, port: 0, token: monitoring-token-0123456789 }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: east }, { name: west }]
services:
  - name: web
    endpoints:
      - { dc: east, address: 192.0.2.1, monitors: [tcp], check: { address: 127.0.0.1, port: 9 } }
      - { dc: west, address: 192.0.2.2 }
records:
  - { name: www.example.test, type: A, service: web, failsafe: [198.51.100.1] }
  - { name: m.example.test, type: A, service: web, policy: { type: multi-source, source: host, metric: cpu, criterion: lowest } }
health:
  monitors: [{ name: tcp, type: tcp, intervalMs: 1000, timeoutMs: 500 }]
`,
  );
  const g = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  try {
    const text = await (await fetch(`http://127.0.0.1:${g.admin!.port}/metrics`)).text();
    return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
  } finally {
    await g.stop();
  }
}

const promtool = (args: string[]): Promise<{ code: number; out: string }> =>
  new Promise((resolve) =>
    execFile('promtool', args, { cwd: DIR }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr })),
  );

test('every metric the dashboard and the alert rules use is exported by a real engine', async (t) => {
  const dashboard = JSON.parse(readFileSync(join(DIR, 'gslbd-dashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  const dashboardExprs = dashboard.panels.flatMap((p) => p.targets.map((x) => x.expr));
  t.true(dashboard.panels.length >= 8);
  t.true(
    dashboard.panels.every((p) => p.targets.length > 0),
    'every panel queries something',
  );
  const rules = parse(readFileSync(join(DIR, 'gslbd-alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  const ruleExprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
  const used = metricNames([...dashboardExprs, ...ruleExprs]);
  t.true(used.size >= 10, [...used].join(' '));
  const have = await exported();
  t.deepEqual(
    [...used].filter((n) => !have.has(n)),
    [],
  );
  t.deepEqual(rules.groups.flatMap((g) => g.rules.map((r) => r.alert)).sort(), [
    'GslbdDataCenterDown',
    'GslbdDown',
    'GslbdEndpointDown',
    'GslbdFailsafeInUse',
    'GslbdMetricsStale',
    'GslbdQueryErrors',
    'GslbdReloadFailed',
  ]);
});

test('the alert rules pass promtool check rules and their unit tests', async (t) => {
  const check = await promtool(['check', 'rules', 'gslbd-alerts.yml']);
  t.is(check.code, 0, check.out);
  t.regex(check.out, /SUCCESS: 7 rules found/);
  const unit = await promtool(['test', 'rules', 'gslbd-alerts.test.yml']);
  t.is(unit.code, 0, unit.out);
  t.regex(unit.out, /SUCCESS/);
});
