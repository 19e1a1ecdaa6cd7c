import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { stringify } from 'yaml';
import type { DnsperfResult } from '../bench/harness/dnsperf.js';
import { startCoredns } from '../support/corednsProcess.js';
import { udpQuery } from '../support/dnsClient.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { freePort } from '../support/freePort.js';
import { startPdns } from '../support/pdnsServer.js';
import { zonesConfig } from '../support/powerdnsFixture.js';
import { replaceOnce } from '../support/replaceOnce.js';
import { childrenKilledAtExit } from '../support/childrenKilledAtExit.js';
import { startReplaceableEngine } from '../support/replaceableEngine.js';
import { steadyDnsperf } from '../support/steadyDnsperf.js';

/**
 * `gslbd ctl replace` (issue 26, item 2) under real load: dnsperf over UDP and over TCP against
 * the standalone listener, over UDP through two real PowerDNS 4.7 servers (the remote backend's
 * Unix connector on the engine's socket, and its HTTP connector on `listeners.powerdns.http`) and
 * over UDP through the real CoreDNS plugin (`coredns-gslb` on the compact door's socket, with
 * `on_error servfail`, so a query the plugin could not get answered shows as SERVFAIL, not as a
 * stale or fail-safe answer) while the engine hands its sockets and connections to a new process.
 * Every query is answered, none SERVFAIL, every answer is the engine's; the socket files stay;
 * the old process exits and the new one serves. An upgrade the same: a new build installed over
 * the running bundle, then a replace, and the new build serves. A new process that cannot load
 * leaves the old one serving.
 */

const TOKEN = 'replace-test-token-0123456789';
/** dnsperf: seconds of load, queries per second per run, seconds before a query counts as lost. */
// 40 s: at load average 22, with four dnsperf runs and two PowerDNS servers beside it, the new
// process took 19 s from the replace request to \`up\`; the replace must end inside the load.
const LOAD_SECONDS = 40;
const RATE = 100;
const LOST_AFTER_S = 10;

const children = childrenKilledAtExit();

/** The engine started here, its log and the pids that said `gslbd up`. */
interface Engine {
  readonly dir: string;
  readonly configFile: string;
  readonly adminUrl: string;
  readonly port: number;
  /** The PowerDNS door's HTTP listener (`listeners.powerdns.http`), on 127.0.0.1. */
  readonly httpPort: number;
  log(): string;
  /** Pids of processes that logged `gslbd up`, in order. */
  ups(): number[];
}

/** Starts `program` (default: the compiled CLI) as `serve` on a fresh configuration. */
async function startEngine(t: ExecutionContext, program = CLI): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-replace-'));
  const configFile = join(dir, 'gslbd.yaml');
  // A fixed port: `gslbd up` names the Unix socket of the PowerDNS door, not its HTTP listener.
  const httpPort = await freePort();
  const config = {
    ...zonesConfig(),
    listeners: {
      dns: [{ address: '127.0.0.1', port: 0 }],
      admin: { address: '127.0.0.1', port: 0, token: TOKEN },
      powerdns: { path: join(dir, 'pdns.sock'), http: { address: '127.0.0.1', port: httpPort } },
      compact: { path: join(dir, 'compact.sock') },
    },
  };
  writeFileSync(configFile, stringify(config));
  const started = await startReplaceableEngine(t, { configFile, dir, program, children });
  const { up } = started;
  return {
    dir,
    configFile,
    adminUrl: `http://${up.admin}`,
    port: Number(up.dns[0]!.split(':')[1]),
    httpPort,
    log: () => started.log(),
    ups: () => started.ups(),
  };
}

/** `gslbd ctl replace`: exit code and output. */
function ctlReplace(adminUrl: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, 'ctl', '--admin', adminUrl, 'replace'], { env: { ...process.env, GSLBD_TOKEN: TOKEN } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // 'close', not 'exit': Node may report the exit before it has read the last output from the pipes.
    c.on('close', (code) => resolve({ code, out }));
  });
}

/** {@link steadyDnsperf} for LOAD_SECONDS at RATE. */
function dnsperf(port: number, queryFile: string, mode: 'udp' | 'tcp'): Promise<{ result: DnsperfResult; out: string }> {
  return steadyDnsperf({ port, queryFile, mode, seconds: LOAD_SECONDS, rate: RATE, lostAfterS: LOST_AFTER_S, children });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('gslbd ctl replace under dnsperf (standalone UDP and TCP, PowerDNS over the Unix and the HTTP connector, CoreDNS): no query lost, no SERVFAIL, sockets kept, old process gone', async (t) => {
  t.timeout(240000);
  if (!existsSync('/usr/bin/dnsperf')) throw new Error('dnsperf is not installed: run `bash test/setup.sh`');
  const engine = await startEngine(t);
  const pdns = await startPdns({ socketPath: join(engine.dir, 'pdns.sock'), instance: 'replace' });
  t.teardown(() => pdns.stop());
  const pdnsHttp = await startPdns({
    socketPath: join(engine.dir, 'pdns.sock'),
    settings: { 'remote-connection-string': `http:url=http://127.0.0.1:${engine.httpPort}/dns,post=1,post_json=1,timeout=2000` },
  });
  t.teardown(() => pdnsHttp.stop());
  // `timeout 2s`, not the plugin's 250 ms: at load average 24 on 2 cores the default fails
  // queries with no replace at all (70 of 2,500 SERVFAIL through CoreDNS at 24.4 in a control run,
  // 64 of them 'down': three timeouts close a connection); this test is about the replace, whose
  // damage (a connection closed with queries in flight) shows as 'down' at once whatever the timeout.
  const metricsPort = await freePort('127.0.0.1');
  const coredns = await startCoredns(
    (port, readyPort) => `.:${port} {
    bind 127.0.0.1
    ready 127.0.0.1:${readyPort}
    prometheus 127.0.0.1:${metricsPort}
    gslb {
        socket ${join(engine.dir, 'compact.sock')}
        on_error servfail
        timeout 2s
    }
}
`,
  );
  t.teardown(() => coredns.stop());
  const queries = join(engine.dir, 'queries.txt');
  writeFileSync(queries, 'www.example.test A\nstatic.example.test A\nexample.test SOA\n');
  const oldPid = engine.ups()[0]!;

  let loadEnded = false;
  const runs = Promise.all([
    dnsperf(engine.port, queries, 'udp'),
    dnsperf(engine.port, queries, 'tcp'),
    dnsperf(pdns.port, queries, 'udp'),
    dnsperf(pdnsHttp.port, queries, 'udp'),
    dnsperf(coredns.port, queries, 'udp'),
  ]).finally(() => (loadEnded = true));
  await new Promise((r) => setTimeout(r, 2000));
  const replaceStarted = performance.now();
  const replaced = await ctlReplace(engine.adminUrl);
  t.log(`gslbd ctl replace took ${Math.round(performance.now() - replaceStarted)} ms (load average ${loadavg()[0]!.toFixed(1)})`);
  if (loadEnded) await runs; // a dnsperf that failed says why
  t.false(loadEnded, 'the hand-over ended while the load still ran');
  t.is(replaced.code, 0, replaced.out);
  const newPid = (JSON.parse(replaced.out) as { pid: number }).pid;
  t.not(newPid, oldPid);
  const [udp, tcp, behindPdns, behindPdnsHttp, behindCoredns] = await runs;
  // Why the plugin failed queries, if it did (`down`: a connection closed with them in flight; `timeout`: no answer in 250 ms).
  const pluginErrors = (await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).match(/^coredns_gslb_engine_errors_total.*$/gm) ?? [];
  t.log(`CoreDNS plugin engine errors: ${pluginErrors.join(', ') || 'none'}`);

  for (let i = 0; i < 400 && isRunning(oldPid); i++) await new Promise((r) => setTimeout(r, 25));
  t.false(isRunning(oldPid), `the old process exited:\n${engine.log()}`);
  t.true(isRunning(newPid), 'the new process serves');
  t.deepEqual(engine.ups(), [oldPid, newPid]);
  t.regex(engine.log(), /"msg":"hand-over complete: the old process exits"/);
  // PowerDNS's connections and dnsperf's TCP connections were passed, not closed.
  const passed = Number(/"connections":(\d+),[^\n]*"msg":"hand-over: every connection passed/.exec(engine.log())?.[1]);
  t.true(passed >= 5, `${passed} connections passed to the new process`);
  t.notRegex(engine.log(), /connections whose answers were not out in time were closed/);
  for (const [name, run] of [
    ['standalone UDP', udp],
    ['standalone TCP', tcp],
    ['PowerDNS (Unix connector)', behindPdns],
    ['PowerDNS (HTTP connector)', behindPdnsHttp],
    ['CoreDNS (compact door)', behindCoredns],
  ] as const) {
    t.log(`${name}: ${run.result.completed} answered, ${run.result.lost} lost, ${JSON.stringify(run.result.rcodes)}`);
    t.is(run.result.lost, 0, `${name}: no query lost\n${run.out}`);
    t.deepEqual(Object.keys(run.result.rcodes), ['NOERROR'], `${name}: every answer NOERROR\n${run.out}`);
    // A loose bound: on a loaded machine (load average 20) PowerDNS answered 899 of the 3,000 queries
    // dnsperf was asked to send (its 8 outstanding queries wait longer); the replace ran inside the load (above).
    t.true(run.result.completed >= RATE * LOAD_SECONDS * 0.1, `${name}: the load ran through the replace`);
  }
  // The socket files are the new process's (Node removes a socket's path when its server closes).
  t.true(lstatSync(join(engine.dir, 'pdns.sock')).isSocket());
  t.true(lstatSync(join(engine.dir, 'compact.sock')).isSocket());
  const after = await udpQuery({ address: '127.0.0.1', port: pdns.port }, { name: 'www.example.test', type: 'A' }, 5000);
  t.deepEqual(after.answers, ['www.example.test A 192.0.2.10'], 'PowerDNS reaches the new process');
  t.is(pdns.exitCode(), undefined, 'PowerDNS kept running');
  // The old process is gone: an answer through the HTTP connector comes from the new process's HTTP listener.
  const afterHttp = await udpQuery({ address: '127.0.0.1', port: pdnsHttp.port }, { name: 'www.example.test', type: 'A' }, 5000);
  t.deepEqual(afterHttp.answers, ['www.example.test A 192.0.2.10'], 'PowerDNS over HTTP reaches the new process');
  t.is(pdnsHttp.exitCode(), undefined, 'the HTTP connector PowerDNS kept running');
});

test('gslbd ctl replace with a configuration the new process cannot load: refused, the old process keeps serving', async (t) => {
  t.timeout(180000);
  const engine = await startEngine(t);
  const oldPid = engine.ups()[0]!;
  writeFileSync(engine.configFile, 'zones: [ {name: }\n');
  const replaced = await ctlReplace(engine.adminUrl);
  t.is(replaced.code, 1, replaced.out);
  t.regex(replaced.out, /exited \(code 1\) before it was up; this process keeps serving/);
  t.true(isRunning(oldPid));
  const r = await udpQuery({ address: '127.0.0.1', port: engine.port }, { name: 'www.example.test', type: 'A' }, 5000);
  t.deepEqual(r.answers, ['www.example.test A 192.0.2.10']);
  t.true(lstatSync(join(engine.dir, 'pdns.sock')).isSocket());
});

/**
 * An installation of the bundled program as the README's systemd units run it
 * (`dist/bundle/cli/gslbd.js` beside `package.json`, `binding.gyp`, the native addons and
 * `node_modules`), in a temporary directory.
 */
function installBundle(t: ExecutionContext): string {
  const root = mkdtempSync(join(tmpdir(), 'gslbd-install-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  cpSync(join(REPO_ROOT, 'dist', 'bundle'), join(root, 'dist', 'bundle'), { recursive: true });
  for (const file of ['package.json', 'binding.gyp']) cpSync(join(REPO_ROOT, file), join(root, file));
  for (const dir of ['build', 'node_modules']) symlinkSync(join(REPO_ROOT, dir), join(root, dir));
  return root;
}

/**
 * Installs a new build over `root`'s bundle as a package upgrade does while the old engine runs:
 * the new files are written beside it and the directory is swapped in by a rename. The new build
 * is this one with another version in its package metadata (what `gslbd_build_info` reports).
 */
function upgradeBundle(root: string, version: string): void {
  const next = join(root, 'dist', 'bundle.next');
  cpSync(join(root, 'dist', 'bundle'), next, { recursive: true });
  const chunks = readdirSync(join(next, 'cli')).filter((f) => readFileSync(join(next, 'cli', f), 'utf8').includes(`version: "${PACKAGE_VERSION}"`));
  if (chunks.length !== 1) throw new Error(`the bundle's package metadata should be in one chunk, found ${chunks.length}`);
  const chunk = join(next, 'cli', chunks[0]!);
  writeFileSync(chunk, replaceOnce(readFileSync(chunk, 'utf8'), `version: "${PACKAGE_VERSION}"`, `version: "${version}"`));
  renameSync(join(root, 'dist', 'bundle'), join(root, 'dist', 'bundle.old'));
  renameSync(next, join(root, 'dist', 'bundle'));
  rmSync(join(root, 'dist', 'bundle.old'), { recursive: true });
}

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The `version` label of `gslbd_build_info` on an engine's `/metrics`. */
async function buildVersion(adminUrl: string): Promise<string | undefined> {
  const metrics = await (await fetch(`${adminUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  return /^gslbd_build_info\{[^}]*version="([^"]+)"/m.exec(metrics)?.[1];
}

test('an upgrade: a new build installed over the running one, then gslbd ctl replace under dnsperf (standalone UDP and TCP, PowerDNS): the new build serves, no query lost, no SERVFAIL', async (t) => {
  t.timeout(240000);
  if (!existsSync('/usr/bin/dnsperf')) throw new Error('dnsperf is not installed: run `bash test/setup.sh`');
  const root = installBundle(t);
  const engine = await startEngine(t, join(root, 'dist', 'bundle', 'cli', 'gslbd.js'));
  t.is(await buildVersion(engine.adminUrl), PACKAGE_VERSION, 'the installed build runs');
  const pdns = await startPdns({ socketPath: join(engine.dir, 'pdns.sock'), instance: 'upgrade' });
  t.teardown(() => pdns.stop());
  const queries = join(engine.dir, 'queries.txt');
  writeFileSync(queries, 'www.example.test A\nstatic.example.test A\nexample.test SOA\n');
  const oldPid = engine.ups()[0]!;

  let loadEnded = false;
  const runs = Promise.all([dnsperf(engine.port, queries, 'udp'), dnsperf(engine.port, queries, 'tcp'), dnsperf(pdns.port, queries, 'udp')]).finally(
    () => (loadEnded = true),
  );
  await new Promise((r) => setTimeout(r, 2000));
  const upgraded = `${PACKAGE_VERSION}-upgrade.1`;
  upgradeBundle(root, upgraded);
  const replaced = await ctlReplace(engine.adminUrl);
  if (loadEnded) await runs;
  t.false(loadEnded, 'the hand-over ended while the load still ran');
  t.is(replaced.code, 0, replaced.out);
  const newPid = (JSON.parse(replaced.out) as { pid: number }).pid;
  const results = await runs;
  for (let i = 0; i < 400 && isRunning(oldPid); i++) await new Promise((r) => setTimeout(r, 25));
  t.false(isRunning(oldPid), `the old process exited:\n${engine.log()}`);
  t.deepEqual(engine.ups(), [oldPid, newPid]);
  t.is(await buildVersion(engine.adminUrl), upgraded, 'the admin listener, passed on, is the new build’s');
  t.notRegex(engine.log(), /connections whose answers were not out in time were closed/);
  for (const [name, run] of [
    ['standalone UDP', results[0]],
    ['standalone TCP', results[1]],
    ['PowerDNS (Unix connector)', results[2]],
  ] as const) {
    t.log(`${name}: ${run.result.completed} answered, ${run.result.lost} lost, ${JSON.stringify(run.result.rcodes)}`);
    t.is(run.result.lost, 0, `${name}: no query lost\n${run.out}`);
    t.deepEqual(Object.keys(run.result.rcodes), ['NOERROR'], `${name}: every answer NOERROR\n${run.out}`);
  }
  const after = await udpQuery({ address: '127.0.0.1', port: pdns.port }, { name: 'www.example.test', type: 'A' }, 5000);
  t.deepEqual(after.answers, ['www.example.test A 192.0.2.10'], 'PowerDNS reaches the new build');
});
