import test from 'ava';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { udpQuery } from '../support/dnsClient.js';
import { CLI, REPO_ROOT, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The operator's tools against a real engine process: `gslbd ctl` (drain and undrain a data
 * center, overrides by glob and CIDR, status, token from a file or the environment, refused
 * without it), the fail-safe made visible (one log line entering and one leaving, a counter per
 * record, `/healthz` degraded with the reason), a failed reload reported as degraded with since
 * when, the logging level applied on SIGHUP, the reload summary, `gslbd_build_info` and `--version`.
 */

const TOKEN = 'ctl-token-0123456789abcdef';
const FAILSAFE = '203.0.113.99';

function config(level = 'info', extraDc = ''): string {
  return `listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, tokenFile: token.txt }
logging: { level: ${level} }
${EXAMPLE_ZONE}
datacenters: [{ name: a }, { name: b }, { name: c }${extraDc}]
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1 }
      - { dc: b, address: 192.0.2.2 }
      - { dc: c, address: 192.0.2.3 }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 3, balanceAlgorithm: all }
    failsafe: [${FAILSAFE}]
`;
}

let engine: EngineProcess;
test.before(async () => {
  engine = await startEngine(config(), { files: { 'token.txt': `${TOKEN}\n` } });
});
test.after.always(stopAllEngines);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `gslbd ctl ...` against the engine; `env` replaces the token variables (none by default). */
function ctl(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('GSLBD_'))) as Record<string, string>;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'ctl', '--admin', engine.adminUrl!, ...args],
      { cwd: REPO_ROOT, env: { ...base, ...env }, timeout: 60000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

const withTokenFile = (): Record<string, string> => ({ GSLBD_TOKEN_FILE: join(engine.dir, 'token.txt') });

async function answers(): Promise<string[]> {
  const r = await udpQuery(engine.server, { name: 'www.example.test', type: 'A' });
  return r.answers.map((a) => a.split(' ')[2]!).sort();
}

async function healthz(): Promise<{ status: string; generation: number; reasons: { kind: string; since: string; detail?: unknown }[] }> {
  return (await (await fetch(`${engine.adminUrl}/healthz`)).json()) as never;
}

async function metrics(): Promise<string> {
  return (await fetch(`${engine.adminUrl}/metrics`)).text();
}

// The tests share one engine: they run in order.
test.serial('ctl drain DC: refused without the token; with it the DC leaves the answers at once, undrain brings it back', async (t) => {
  t.deepEqual(await answers(), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);

  const refused = await ctl(['drain', 'b']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /401/);
  t.deepEqual(await answers(), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);

  const drained = await ctl(['drain', 'b'], withTokenFile());
  t.is(drained.code, 0, drained.stderr);
  t.like(JSON.parse(drained.stdout), { override: 'drain', matched: ['web/b/192.0.2.2'] });
  // The answer to the next query, without waiting: the override is published before the call returns.
  t.deepEqual(await answers(), ['192.0.2.1', '192.0.2.3']);

  const unknown = await ctl(['drain', 'nowhere'], withTokenFile());
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /404 no enabled endpoint matches/);

  const undrained = await ctl(['undrain', 'b'], { GSLBD_TOKEN: TOKEN });
  t.is(undrained.code, 0, undrained.stderr);
  t.deepEqual(await answers(), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
});

test.serial('fail-safe made visible: one log line entering and one leaving, a counter per record, /healthz degraded with the reason', async (t) => {
  t.is((await healthz()).status, 'ok');
  const from = engine.logs().length;
  // Every endpoint out, by three selectors: a glob, a CIDR and a data center.
  t.is((await ctl(['override', 'down', '--endpoints', 'web/a/*'], withTokenFile())).code, 0);
  t.is((await ctl(['override', 'drain', '--cidr', '192.0.2.2/32'], withTokenFile())).code, 0);
  t.deepEqual(await answers(), ['192.0.2.3']);
  t.is((await ctl(['override', 'drain', '--dc', 'c'], withTokenFile())).code, 0);
  t.deepEqual(await answers(), [FAILSAFE]);

  const entered = await engine.waitForLog((l) => l.msg.startsWith('fail-safe entered'), 10000, from);
  t.like(entered, { level: 40, record: 'www.example.test/A', allDown: 'failsafe', answer: 'fail-safe list' });
  const h = await healthz();
  t.is(h.status, 'degraded');
  t.like(h.reasons[0], { kind: 'failsafe', detail: [{ record: 'www.example.test/A', answer: 'fail-safe list' }] });
  t.regex(h.reasons[0]!.since, /^\d{4}-\d\d-\d\dT/);
  const status = await ctl(['status']);
  t.is(status.code, 3);
  t.like(JSON.parse(status.stdout), { status: 'degraded' });
  const m = await metrics();
  t.regex(m, /^gslbd_failsafe_entered_total\{record="www\.example\.test\/A"\} 1$/m);
  t.regex(m, /^gslbd_failsafe_active\{record="www\.example\.test\/A"\} 1$/m);

  // Clearing every override of the service at once: the record leaves the fail-safe.
  const cleared = await ctl(['override', 'none', '--service', 'web'], withTokenFile());
  t.like(JSON.parse(cleared.stdout), { matched: ['web/a/192.0.2.1', 'web/b/192.0.2.2', 'web/c/192.0.2.3'] });
  t.deepEqual(await answers(), ['192.0.2.1', '192.0.2.2', '192.0.2.3']);
  const left = await engine.waitForLog((l) => l.msg.startsWith('fail-safe left'), 10000, from);
  t.like(left, { level: 30, record: 'www.example.test/A' });
  t.is(
    engine
      .logs()
      .slice(from)
      .filter((l) => l.msg.startsWith('fail-safe entered')).length,
    1,
  );
  t.is(
    engine
      .logs()
      .slice(from)
      .filter((l) => l.msg.startsWith('fail-safe left')).length,
    1,
  );
  t.is((await healthz()).status, 'ok');
  t.is((await ctl(['status'])).code, 0);
  t.regex(await metrics(), /^gslbd_failsafe_entered_total\{record="www\.example\.test\/A"\} 1$/m);
});

test.serial('a failed reload makes /healthz degraded since the failure; the logging level applies on SIGHUP; a reload says what changed', async (t) => {
  const before = (await healthz()).generation;
  const from = engine.logs().length;
  engine.writeConfig('records: [ this is not valid');
  engine.signal('SIGHUP');
  await engine.waitForLog((l) => l.msg.startsWith('reload failed'), 10000, from);
  const failed = await healthz();
  t.is(failed.status, 'degraded');
  t.like(
    failed.reasons.find((r) => r.kind === 'reload-failed'),
    { kind: 'reload-failed' },
  );
  t.is(failed.generation, before);

  // The level goes to warn: the reload's own info line is not written any more.
  engine.writeConfig(config('warn'));
  engine.signal('SIGHUP');
  await waitFor('the reload to warn', async () => (await healthz()).status === 'ok', 10000);
  t.false(
    engine
      .logs()
      .slice(from)
      .some((l) => l.msg === 'configuration reloaded'),
  );

  // Back to info, with a data center added: the reload is logged with its summary.
  engine.writeConfig(config('info', ', { name: d }'));
  engine.signal('SIGHUP');
  const reloaded = await engine.waitForLog((l) => l.msg === 'configuration reloaded', 10000, from);
  t.like(reloaded, { changes: { datacenters: { added: ['d'], removed: [], changed: [] } } });
  const status = JSON.parse((await ctl(['status'])).stdout) as { status: string; reasons: unknown[]; lastReload: { generation: number } };
  t.like(status, { status: 'ok', reasons: [] });
  t.true(status.lastReload.generation > before);

  // Settings only a restart applies: one warning for each that changed.
  const beforeFormat = engine.logs().length;
  engine.writeConfig(config('info, time: iso, levels: names', ', { name: d }'));
  engine.signal('SIGHUP');
  await engine.waitForLog((l) => l.msg === 'configuration reloaded', 10000, beforeFormat);
  const warned = engine
    .logs()
    .slice(beforeFormat)
    .filter((l) => String(l.msg).endsWith('takes effect at the next restart'))
    .map((l) => (l as { setting?: string }).setting);
  t.deepEqual(warned, ['logging.time', 'logging.levels']);
});

test.serial('queries are counted by query type name; unnamed types as other', async (t) => {
  const count = (text: string, qtype: string): number =>
    Number(new RegExp(`^gslbd_dns_queries_by_qtype_total\\{qtype="${qtype}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  const before = await metrics();
  await udpQuery(engine.server, { name: 'www.example.test', type: 'AAAA' });
  // Types gslbd has no name for.
  await udpQuery(engine.server, { name: 'www.example.test', type: 'CERT' });
  await udpQuery(engine.server, { name: 'www.example.test', type: 'LOC' });
  const after = await metrics();
  t.is(count(after, 'AAAA') - count(before, 'AAAA'), 1);
  t.is(count(after, 'other') - count(before, 'other'), 2);
  t.true(count(after, 'A') > 0);
});

test.serial('queries are counted per zone, and the GSLB records selected most per record', async (t) => {
  const count = (text: string, series: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return Number(line?.slice(series.length + 1) ?? 0);
  };
  const zone = 'gslbd_dns_queries_by_zone_total{zone="example.test"}';
  const record = 'gslbd_gslb_record_selections_total{record="www.example.test",type="A"}';
  const before = await metrics();
  await udpQuery(engine.server, { name: 'www.example.test', type: 'A' });
  await udpQuery(engine.server, { name: 'www.example.test', type: 'A' });
  await udpQuery(engine.server, { name: 'example.test', type: 'SOA' });
  // Outside every zone: no zone series.
  await udpQuery(engine.server, { name: 'www.elsewhere.invalid', type: 'A' });
  const after = await metrics();
  t.is(count(after, zone) - count(before, zone), 3);
  t.is(count(after, record) - count(before, record), 2);
  t.notRegex(after, /gslbd_dns_queries_by_zone_total\{zone="elsewhere/);
});

test.serial('gslbd_build_info and gslbd --version carry the package version', async (t) => {
  const version = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  t.regex(await metrics(), new RegExp(`^gslbd_build_info\\{version="${version.replaceAll('.', '\\.')}",nodejs="v[\\d.]+"\\} 1$`, 'm'));
  const out = await new Promise<string>((resolve) => execFile(process.execPath, [CLI, '--version'], (_e, stdout) => resolve(stdout)));
  t.is(out, `${version}\n`);
});

test.serial('promtool check metrics accepts the live /metrics (default Node metrics, fail-safe and build info included)', async (t) => {
  const text = await metrics();
  t.regex(text, /^nodejs_heap_size_used_bytes /m);
  const r = await new Promise<Run>((resolve, reject) => {
    const child = execFile('promtool', ['check', 'metrics'], { timeout: 30000 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT')
        return reject(new Error('promtool is not installed (bash test/setup.sh installs prometheus)'));
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
    child.stdin!.end(text);
  });
  t.deepEqual(r, { code: 0, stdout: '', stderr: '' });
});

test.serial('ctl without a reachable engine exits 2', async (t) => {
  const r = await new Promise<Run>((resolve) =>
    execFile(process.execPath, [CLI, 'ctl', '--admin', 'http://127.0.0.1:1', 'status'], (err, stdout, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    ),
  );
  t.is(r.code, 2);
  t.regex(r.stderr, /cannot reach/);
});

test.serial('stale metrics make /healthz and /status degraded: a pushed host row whose pushes stopped, until the next push', async (t) => {
  const pushing = await startEngine(`${config()}metrics: { host: { intervalSeconds: 1, staleAfterSeconds: 3 } }\n`, {
    files: { 'token.txt': `${TOKEN}\n` },
  });
  const healthzOf = async (): Promise<{ status: string; reasons: { kind: string; detail?: unknown }[] }> =>
    (await (await fetch(`${pushing.adminUrl}/healthz`)).json()) as never;
  const push = async (): Promise<void> => {
    const r = await fetch(`${pushing.adminUrl}/metrics/host`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ samples: [{ dc: 'b', cpu: 10 }] }),
    });
    t.is(r.status, 200, await r.text());
  };
  await push();
  t.false((await healthzOf()).reasons.some((r) => r.kind === 'stale-metrics'));
  await waitFor('the host row to go stale', async () => (await healthzOf()).status === 'degraded', 15000);
  const stale = await healthzOf();
  t.like(
    stale.reasons.find((r) => r.kind === 'stale-metrics'),
    { kind: 'stale-metrics', detail: [{ source: 'host', dc: 'b' }] },
  );
  const status = (await (await fetch(`${pushing.adminUrl}/status`)).json()) as { status: string; reasons: { kind: string }[] };
  t.is(status.status, 'degraded');
  t.true(status.reasons.some((r) => r.kind === 'stale-metrics'));
  await push();
  t.false((await healthzOf()).reasons.some((r) => r.kind === 'stale-metrics'));
});
