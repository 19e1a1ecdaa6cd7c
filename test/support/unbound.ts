import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './freePort.js';
import { parseDigOutput, runDig, type DigResult } from './dig.js';

/**
 * Debian's `unbound` as a validating resolver on loopback, in front of an authoritative server
 * under test: run in the foreground (`unbound -d -c FILE`) with what makes it work here — the
 * subnet cache before the validator (`module-config: "subnetcache validator iterator"`, so ECS
 * queries are forwarded and answers cached per client subnet), `send-client-subnet: 127.0.0.1`,
 * `do-not-query-localhost: no`, a `stub-zone` per zone, a trust anchor file with the zones' DS or
 * DNSKEY records, no chroot, no user change, and `local-zone: "test." nodefault` (unbound answers
 * `.test` itself otherwise, RFC 6761). A missing binary fails the test (`bash test/setup.sh`).
 */

/** A zone unbound sends to the server under test. */
export interface StubZone {
  readonly zone: string;
  readonly address: string;
  readonly port: number;
}

/** Options for {@link startUnbound}. */
export interface UnboundOptions {
  readonly stubs: readonly StubZone[];
  /** Trust anchors: master-file DS or DNSKEY lines. */
  readonly trustAnchors: readonly string[];
  /**
   * Validates signatures as if it were this time (seconds since the epoch): unbound's
   * `val-override-date`, for engines whose clock a test sets.
   */
  readonly validationTime?: number;
}

/** A running unbound. */
export interface Unbound {
  readonly address: string;
  readonly port: number;
  /** Asks it with the real `dig` (recursion desired, DO set, 2 s per try): status, flags (`ad`), sections. */
  query(name: string, type: string, extra?: readonly string[]): Promise<DigResult>;
  /** Its log so far (verbosity 1, validation failures at val-log-level 2). */
  log(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts unbound and waits until it serves.
 * @throws Error when unbound is missing, rejects its configuration, or does not start within 20 s.
 */
export async function startUnbound(options: UnboundOptions): Promise<Unbound> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-unbound-'));
  const port = await freePort('127.0.0.1');
  const anchors = join(dir, 'anchors');
  writeFileSync(anchors, `${options.trustAnchors.join('\n')}\n`);
  const date =
    options.validationTime === undefined
      ? ''
      : `  val-override-date: "${new Date(options.validationTime * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14)}"\n`;
  const stubs = options.stubs.map((s) => `stub-zone:\n  name: "${s.zone}"\n  stub-addr: ${s.address}@${s.port}\n`).join('');
  const config = `server:
  interface: 127.0.0.1
  port: ${port}
  do-not-query-localhost: no
  module-config: "subnetcache validator iterator"
  send-client-subnet: 127.0.0.1
  chroot: ""
  username: ""
  directory: "${dir}"
  pidfile: ""
  use-syslog: no
  logfile: ""
  trust-anchor-file: "${anchors}"
  verbosity: 1
  val-log-level: 2
  num-threads: 1
  access-control: 127.0.0.0/8 allow
  local-zone: "test." nodefault
${date}${stubs}`;
  const file = join(dir, 'unbound.conf');
  writeFileSync(file, config);
  const child = spawn('unbound', ['-d', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (log += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (log += s));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.on('exit', () => running.delete(child));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const deadline = setTimeout(() => fail('did not start within 20 s'), 20000);
    const poll = setInterval(() => {
      if (log.includes('start of service')) {
        settled = true;
        clearInterval(poll);
        clearTimeout(deadline);
        resolve();
      }
    }, 20);
    function fail(why: string): void {
      if (settled) return;
      settled = true;
      clearInterval(poll);
      clearTimeout(deadline);
      void stop().then(() => reject(new Error(`unbound ${why}:\n${log}\n${config}`)));
    }
    child.once('error', (e) =>
      fail((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'is not installed: run `bash test/setup.sh` (Debian package unbound)' : e.message),
    );
    child.once('exit', (code) => fail(`exited with ${code}`));
  });
  return {
    address: '127.0.0.1',
    port,
    query: async (name, type, extra = []) =>
      parseDigOutput(await runDig(['@127.0.0.1', '-p', String(port), '+dnssec', '+time=4', '+tries=2', ...extra, name, type])),
    log: () => log,
    stop,
  };
}
