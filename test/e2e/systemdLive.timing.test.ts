import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import type { DnsperfResult } from '../bench/harness/dnsperf.js';
import { childrenKilledAtExit } from '../support/childrenKilledAtExit.js';
import { udpQuery } from '../support/dnsClient.js';
import { BUNDLED_CLI, REPO_ROOT } from '../support/engineProcess.js';
import { startLiveSystemd } from '../support/liveSystemd.js';
import { steadyDnsperf } from '../support/steadyDnsperf.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * The example unit `examples/systemd/gslbd.service`, unchanged, under a live systemd (issue 26,
 * item 2): systemd 252 as PID 1 of its own PID and mount namespace (`test/support/liveSystemd.ts`)
 * starting only `gslbd.service`, this checkout at the unit's `/opt/gslbd`, the configuration at
 * its `/etc/gslbd/gslbd.yaml` (standalone UDP and TCP listener and admin API on 127.0.0.1, free
 * ports) and its `gslbd` user. The one addition is a drop-in: `DefaultDependencies=no` (no
 * sysinit.target: the machine's own services must not start) and the engine's output appended to
 * a file here (no journald inside); `network-online.target` is masked for the same reason.
 *
 * With dnsperf querying over UDP and over TCP: `systemctl reload gslbd` (the unit's
 * `ExecReload=/bin/kill -HUP $MAINPID`, the engine's config reload) serves the edited
 * configuration; `gslbd ctl replace` moves the service to a new process and systemd takes its
 * `MAINPID=` (`systemctl show -p MainPID`), the unit staying active/running; a second
 * `systemctl reload` reaches the new process; no query is lost and every answer is NOERROR. Then
 * the replacement killed (SIGKILL): systemd restarts the unit; a replace again and `systemctl
 * stop`: the engine gets SIGTERM and exits 0 (`Result=success`). That stop needs the unit's
 * `ExecStop=`. Without it systemd 252 sends SIGKILL right after SIGTERM to a main process that
 * was not its child when announced by `MAINPID=` (`src/process/README.md`, "Under a live systemd").
 */

const TOKEN = 'live-systemd-token-0123456789';
/** dnsperf: seconds of load, queries per second per run, seconds before a query counts as lost. */
const LOAD_SECONDS = 20;
const RATE = 100;
const LOST_AFTER_S = 5;

const children = childrenKilledAtExit();

/** The configuration with `static.example.test A` set to `address`. */
function configText(address: string): string {
  const config = zonesConfig() as { zones: { records: { name: string; type: string; data: string }[] }[] };
  const record = config.zones[0]!.records.find((r) => r.name === 'static' && r.type === 'A');
  if (!record) throw new Error('the fixture has no static A record');
  record.data = address;
  return stringify({
    ...config,
    listeners: {
      dns: [{ address: '127.0.0.1', port: 0 }],
      admin: { address: '127.0.0.1', port: 0, tokenFile: '/etc/gslbd/admin-token' },
    },
  });
}

/** {@link steadyDnsperf} for LOAD_SECONDS at RATE. */
function dnsperf(port: number, queryFile: string, mode: 'udp' | 'tcp'): Promise<{ result: DnsperfResult; out: string }> {
  return steadyDnsperf({ port, queryFile, mode, seconds: LOAD_SECONDS, rate: RATE, lostAfterS: LOST_AFTER_S, children });
}

function ctl(adminUrl: string, ...args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BUNDLED_CLI, 'ctl', '--admin', adminUrl, ...args], { env: { ...process.env, GSLBD_TOKEN: TOKEN } });
    let out = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) => resolve({ code, out }));
  });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, context: () => string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('examples/systemd/gslbd.service under a live systemd with dnsperf on UDP and TCP: systemctl reload, gslbd ctl replace (MainPID moves), reload again; no query lost, no SERVFAIL; a killed replacement restarted; a stop after a replace clean', async (t) => {
  t.timeout(120000);
  if (!existsSync('/usr/bin/dnsperf')) throw new Error('dnsperf is not installed: run `bash test/setup.sh`');
  if (!existsSync(BUNDLED_CLI)) throw new Error(`${BUNDLED_CLI} is missing: run \`npm run build\``);
  const unit = readFileSync(join(REPO_ROOT, 'examples/systemd/gslbd.service'), 'utf8');
  const systemd = await startLiveSystemd({
    target: 'gslbd-test.target',
    units: (dir) => ({
      'gslbd.service': unit,
      'gslbd.service.d/test.conf': `[Unit]\nDefaultDependencies=no\n[Service]\nStandardOutput=append:${join(dir, 'engine.log')}\nStandardError=inherit\n`,
      'gslbd-test.target': '[Unit]\nDescription=gslbd alone under a live systemd\nDefaultDependencies=no\nWants=gslbd.service\n',
    }),
    masked: ['network-online.target'],
    user: 'gslbd',
    files: {
      '/etc/gslbd/gslbd.yaml': { text: configText('192.0.2.20'), mode: 0o640, group: 'gslbd' },
      '/etc/gslbd/admin-token': { text: TOKEN, mode: 0o640, group: 'gslbd' },
    },
  });
  t.teardown(() => systemd.stop());
  const engineLog = (): string => {
    try {
      return readFileSync(join(systemd.dir, 'engine.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const context = (): string => `engine:\n${engineLog()}\nsystemd:\n${systemd.console()}`;
  const ups = (): { pid: number; dns: string[]; admin: string }[] =>
    [...engineLog().matchAll(/^\{.*"msg":"gslbd up".*$/gm)].map((m) => JSON.parse(m[0]) as { pid: number; dns: string[]; admin: string });

  await until('gslbd.service active', async () => (await systemd.show('gslbd.service', 'ActiveState')).ActiveState === 'active', 30000, context);
  // Only the engine runs: no service of the machine was started beside it.
  const services = await systemd.systemctl('list-units', '--type=service', '--state=active,activating', '--no-legend', '--plain');
  t.deepEqual(
    services.split('\n').map((l) => l.split(/\s+/)[0]),
    ['gslbd.service'],
    services,
  );
  const first = ups()[0]!;
  const port = Number(first.dns[0]!.split(':')[1]);
  const adminUrl = `http://${first.admin}`;
  const before = await systemd.show('gslbd.service', 'MainPID', 'Type', 'NotifyAccess');
  t.is(Number(before.MainPID), first.pid, 'systemd tracks the process that said up');
  t.is(before.Type, 'notify');
  const answer = async (): Promise<string[]> => (await udpQuery({ address: '127.0.0.1', port }, { name: 'static.example.test', type: 'A' })).answers;
  t.deepEqual(await answer(), ['static.example.test A 192.0.2.20']);

  const queries = join(systemd.dir, 'queries.txt');
  writeFileSync(queries, 'www.example.test A\nstatic.example.test A\nexample.test SOA\n');
  const runs = Promise.all([dnsperf(port, queries, 'udp'), dnsperf(port, queries, 'tcp')]);
  const started = Date.now();
  await new Promise((r) => setTimeout(r, 2000));

  // systemctl reload: ExecReload= sends SIGHUP to $MAINPID, the engine reloads its configuration.
  writeFileSync(systemd.pathInside('/etc/gslbd/gslbd.yaml'), configText('192.0.2.21'));
  await systemd.systemctl('reload', 'gslbd.service');
  await until('the reloaded answer', async () => (await answer())[0] === 'static.example.test A 192.0.2.21', 20000, context);

  // gslbd ctl replace: the new process takes the sockets, the old one sends MAINPID=<new> and exits.
  const replaced = await ctl(adminUrl, 'replace');
  t.is(replaced.code, 0, replaced.out);
  const { pid: newPid, replaced: oldPid } = JSON.parse(replaced.out) as { pid: number; replaced: number };
  t.is(oldPid, first.pid);
  await until(`the old process ${oldPid} gone`, () => !systemd.running(oldPid), 20000, context);
  const after = await systemd.show('gslbd.service', 'MainPID', 'ActiveState', 'SubState', 'NRestarts');
  t.deepEqual(after, { MainPID: String(newPid), ActiveState: 'active', SubState: 'running', NRestarts: '0' }, context());

  // A reload after the replace reaches the new main process.
  writeFileSync(systemd.pathInside('/etc/gslbd/gslbd.yaml'), configText('192.0.2.22'));
  await systemd.systemctl('reload', 'gslbd.service');
  await until('the answer reloaded by the new process', async () => (await answer())[0] === 'static.example.test A 192.0.2.22', 20000, context);
  const elapsed = Date.now() - started;
  t.log(`reload, replace and reload took ${elapsed} ms of the ${LOAD_SECONDS} s load (load average ${loadavg()[0]!.toFixed(1)})`);
  t.true(elapsed < LOAD_SECONDS * 1000 - 2000, 'every step ran inside the load');

  for (const [name, run] of [
    ['UDP', (await runs)[0]],
    ['TCP', (await runs)[1]],
  ] as const) {
    t.log(`${name}: ${run.result.completed} answered, ${run.result.lost} lost, ${JSON.stringify(run.result.rcodes)}`);
    t.is(run.result.lost, 0, `${name}: no query lost\n${run.out}`);
    t.deepEqual(Object.keys(run.result.rcodes), ['NOERROR'], `${name}: every answer NOERROR\n${run.out}`);
    t.true(run.result.completed >= RATE * LOAD_SECONDS * 0.9, `${name}: the load ran\n${run.out}`);
  }
  const status = await systemd.show('gslbd.service', 'MainPID', 'ActiveState', 'StatusText');
  t.is(status.MainPID, String(newPid));
  t.is(status.ActiveState, 'active');
  t.log(`status after the replace and a reload: ${status.StatusText}`);

  // The replacement is the unit's main process for failures too: killed, the unit restarts (Restart=on-failure).
  await systemd.inside('kill', '-KILL', String(newPid));
  await until('the restart after the replacement was killed', async () => (await systemd.show('gslbd.service', 'NRestarts')).NRestarts === '1', 20000, context);
  await until('gslbd.service active again', async () => (await systemd.show('gslbd.service', 'ActiveState')).ActiveState === 'active', 30000, context);
  const restartedPid = ups().at(-1)!.pid;
  t.not(restartedPid, newPid);
  t.is((await systemd.show('gslbd.service', 'MainPID')).MainPID, String(restartedPid));

  // A stop after a replace: SIGTERM, the engine drains and exits 0 (the unit's ExecStop= waits for it).
  const replacedAgain = await ctl(`http://${ups().at(-1)!.admin}`, 'replace');
  t.is(replacedAgain.code, 0, replacedAgain.out);
  const lastPid = (JSON.parse(replacedAgain.out) as { pid: number }).pid;
  await until(`the process ${restartedPid} gone`, () => !systemd.running(restartedPid), 20000, context);
  t.is((await systemd.show('gslbd.service', 'MainPID')).MainPID, String(lastPid));
  await systemd.systemctl('stop', 'gslbd.service');
  const stopped = await systemd.show('gslbd.service', 'ActiveState', 'Result', 'ExecMainCode', 'ExecMainStatus');
  // ExecMainCode 1: CLD_EXITED (exited, not killed by a signal).
  t.deepEqual(stopped, { ActiveState: 'inactive', Result: 'success', ExecMainCode: '1', ExecMainStatus: '0' }, context());
  t.false(systemd.running(lastPid));
  t.regex(engineLog(), new RegExp(`"pid":${lastPid},"signal":"SIGTERM","msg":"stopping"`));
});
