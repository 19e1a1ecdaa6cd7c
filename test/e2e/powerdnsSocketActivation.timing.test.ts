import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { stringify } from 'yaml';
import { udpQuery } from '../support/dnsClient.js';
import { startPdns } from '../support/pdnsServer.js';
import { zonesConfig } from '../support/powerdnsFixture.js';

/**
 * PowerDNS 4.7 during an engine outage (issue 26, item 4), with the engine's socket held by the
 * service manager (systemd socket activation, examples/powerdns/gslbd.socket): the real
 * `systemd-socket-activate` binds the socket and passes it (LISTEN_FDS) to a loop that restarts
 * the engine at once whenever it dies, as `Restart=always` with `RestartSec=0` does. The engine
 * is killed with SIGKILL under a steady query load through pdns_server. While it is away,
 * PowerDNS's new connections wait in the held socket and their queries are answered when the next
 * engine accepts them (within the connection string's timeout), so only the queries on the
 * connections the dead engine held fail — one SERVFAIL per PowerDNS connection, and one more per
 * connection for each full timeout an outage lasts — instead of every query of the outage (test/e2e/powerdnsProcess.test.ts shows that without activation).
 */

const CLI = fileURLToPath(
  new URL(existsSync(fileURLToPath(new URL('../../dist', import.meta.url))) ? '../../dist/src/cli/main.js' : '../../src/cli/main.js', import.meta.url),
);
/** receiver-threads × distributor-threads + 1 (TCP) of examples/powerdns/pdns.conf: the connections PowerDNS holds. */
const PDNS_CONNECTIONS = 1 * 6 + 1;
/** The connection string's `timeout` of the test's pdns_server (test/support/pdnsServer.ts). */
const PDNS_TIMEOUT_MS = 2000;
/** Queries kept in flight through PowerDNS during the test. */
const IN_FLIGHT = 4;

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

interface Answer {
  readonly sentMs: number;
  readonly rcode: string;
  readonly answers: readonly string[];
}

test('engine killed under load behind PowerDNS with its socket held by systemd: one SERVFAIL per PowerDNS connection (and per timeout of the outage), not one per query', async (t) => {
  t.timeout(120000);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-activation-'));
  const socket = join(dir, 'gslbd.sock');
  const configFile = join(dir, 'gslbd.yaml');
  writeFileSync(configFile, stringify({ ...zonesConfig(), listeners: { powerdns: { path: socket } } }));
  // The engine restarted at once whenever it exits (Restart=always, RestartSec=0); each one is
  // told the passed socket is its own (LISTEN_PID = its pid: `exec` keeps the subshell's pid).
  const loop = `while :; do (LISTEN_PID=$BASHPID exec "${process.execPath}" "${CLI}" serve "${configFile}"); done`;
  const holder = spawn('systemd-socket-activate', ['-l', socket, 'bash', '-c', loop], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.add(holder);
  let log = '';
  const ups: { pid: number; atMs: number }[] = [];
  const onLog = (chunk: Buffer): void => {
    log += chunk.toString();
    // Lines may arrive split across chunks: scan the whole log, record each engine once.
    for (const m of log.matchAll(/^\{.*"pid":(\d+).*"msg":"gslbd up".*$/gm)) {
      if (!ups.some((u) => u.pid === Number(m[1]))) ups.push({ pid: Number(m[1]), atMs: performance.now() });
    }
  };
  holder.stdout!.on('data', onLog);
  holder.stderr!.on('data', onLog);
  const holderExited = new Promise<void>((r) => holder.once('exit', () => r()));
  let pdns: Awaited<ReturnType<typeof startPdns>> | undefined;
  t.teardown(async () => {
    await pdns?.stop();
    try {
      process.kill(-holder.pid!, 'SIGKILL'); // the holder, the loop and the engine: their own process group
    } catch {
      // gone
    }
    await holderExited;
    children.delete(holder);
    rmSync(dir, { recursive: true, force: true });
  });
  // The file appears at bind(), before listen(): wait for systemd-socket-activate's own line.
  for (let i = 0; i < 400 && !log.includes('Listening on'); i++) await new Promise((r) => setTimeout(r, 25));
  t.true(existsSync(socket), `the socket is bound by systemd-socket-activate:\n${log}`);
  // The first connection launches the engine (systemd-socket-activate starts its command then).
  // PowerDNS starts once the engine is up, as the units order it: PowerDNS exits at start when its
  // first requests are not answered within the timeout, and a loaded test machine can take longer.
  const probe = connect(socket);
  probe.on('error', () => undefined);
  for (let i = 0; i < 2400 && ups.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  probe.destroy();
  t.is(ups.length, 1, `the engine came up:\n${log}`);
  pdns = await startPdns({ socketPath: socket, instance: 'activation' });
  const server = { address: pdns.address, port: pdns.port };

  const answers: Answer[] = [];
  const started = performance.now();
  let stop = false;
  const client = async (): Promise<void> => {
    while (!stop) {
      const sentMs = performance.now() - started;
      try {
        const r = await udpQuery(server, { name: 'www.example.test', type: 'A' }, 5000);
        answers.push({ sentMs, rcode: ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN'][r.rcode] ?? String(r.rcode), answers: r.answers });
      } catch {
        answers.push({ sentMs, rcode: 'TIMEOUT', answers: [] });
      }
    }
  };
  const clients = Array.from({ length: IN_FLIGHT }, () => client());
  await new Promise((r) => setTimeout(r, 1000));
  const killedMs = performance.now() - started;
  process.kill(ups[0]!.pid, 'SIGKILL');
  for (let i = 0; i < 600 && ups.length < 2; i++) await new Promise((r) => setTimeout(r, 25));
  t.is(ups.length, 2, `the next engine came up:\n${log}`);
  const upMs = ups[1]!.atMs - started;
  await new Promise((r) => setTimeout(r, 1500));
  stop = true;
  await Promise.all(clients);

  const outage = answers.filter((a) => a.sentMs >= killedMs && a.sentMs < upMs);
  const servfail = answers.filter((a) => a.rcode === 'SERVFAIL');
  const counts = (list: readonly Answer[]): Record<string, number> =>
    list.reduce<Record<string, number>>((c, a) => ({ ...c, [a.rcode]: (c[a.rcode] ?? 0) + 1 }), {});
  t.log(
    `engine down ${Math.round(upMs - killedMs)} ms; ${answers.length} queries: ${JSON.stringify(counts(answers))}; sent while down: ${JSON.stringify(counts(outage))}`,
  );
  t.deepEqual(
    answers.filter((a) => a.rcode !== 'NOERROR' && a.rcode !== 'SERVFAIL'),
    [],
    'never NXDOMAIN, no timeout',
  );
  // One per connection the killed engine held, and one per connection for each full timeout the
  // outage lasted (a loaded machine can take seconds to start even this small configuration).
  const bound = PDNS_CONNECTIONS * (1 + Math.floor((upMs - killedMs) / PDNS_TIMEOUT_MS));
  t.true(servfail.length <= bound, `${servfail.length} SERVFAIL, at most ${bound}`);
  t.true(
    answers.filter((a) => a.rcode === 'NOERROR').every((a) => a.answers.join() === 'www.example.test A 192.0.2.10'),
    'every answer is the engine’s',
  );
  t.true(
    outage.some((a) => a.rcode === 'NOERROR'),
    'queries sent while no engine ran were answered once the next one accepted them',
  );
  t.is(pdns.exitCode(), undefined, 'PowerDNS kept running');
});
