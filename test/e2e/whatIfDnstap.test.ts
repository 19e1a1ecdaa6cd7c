import test from 'ava';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryFileError } from '../../src/cli/queryLog/countedQueries.js';
import { readQueryFormats } from '../../src/cli/queryLog/queryFormats.js';
import type { ReplaySummary } from '../../src/cli/whatIfReplay.js';
import type { RunningGslbd } from '../../src/process/gslbdProcess.js';
import { dig } from '../support/dig.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { freePort } from '../support/freePort.js';
import { startGermanyCandidateBed } from '../support/germanyCandidate.js';

/**
 * Replay from dnstap: Debian's unbound (built with dnstap) forwards example.test to a running
 * engine and logs its client and forwarder queries over Frame Streams to fstrm_capture (Debian
 * fstrm-bin), which writes the file; dig asks unbound with and without ECS. The file's CLIENT_QUERY
 * messages are the queries (the ECS prefix as client, else the query address; unbound's
 * FORWARDER_QUERY messages skipped), and `gslbd simulate` moves exactly the German network.
 */

const UNBOUND = '/usr/sbin/unbound';
const FSTRM_CAPTURE = '/usr/bin/fstrm_capture';
const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnstap-'));
const DNSTAP = join(dir, 'queries.dnstap');
let g: RunningGslbd;

/** Starts a process and waits until `ready` holds; its output is kept in `log`. */
async function startProcess(command: string, args: string[], ready: (log: string) => boolean): Promise<{ child: ChildProcess; log: () => string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (log += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (log += s));
  const deadline = Date.now() + 20_000;
  while (!ready(log)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${command} did not start: ${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, log: () => log };
}

async function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

test.before(async (t) => {
  for (const tool of [UNBOUND, FSTRM_CAPTURE]) {
    if (!existsSync(tool)) {
      if (process.env.CI === 'true') throw new Error(`${tool} is missing (test/setup.sh installs unbound and fstrm-bin)`);
      return;
    }
  }
  g = await startGermanyCandidateBed(dir);
  const engine = g.dns.bound[0]!;
  const socket = join(dir, 'dnstap.sock');
  const capture = await startProcess(FSTRM_CAPTURE, ['-t', 'protobuf:dnstap.Dnstap', '-u', socket, '-w', DNSTAP], () => existsSync(socket));
  const port = await freePort('127.0.0.1');
  writeFileSync(
    join(dir, 'unbound.conf'),
    `server:
  interface: 127.0.0.1
  port: ${port}
  do-not-query-localhost: no
  module-config: "iterator"
  chroot: ""
  username: ""
  directory: "${dir}"
  pidfile: ""
  use-syslog: no
  logfile: ""
  verbosity: 1
  num-threads: 1
  access-control: 127.0.0.0/8 allow
  local-zone: "test." nodefault
forward-zone:
  name: "example.test"
  forward-addr: ${engine.address}@${engine.port}
dnstap:
  dnstap-enable: yes
  dnstap-socket-path: "${socket}"
  dnstap-log-client-query-messages: yes
  dnstap-log-forwarder-query-messages: yes
`,
  );
  const unbound = await startProcess(UNBOUND, ['-d', '-c', join(dir, 'unbound.conf')], (log) => log.includes('start of service'));
  try {
    // unbound connects to the collector on its own thread, after it serves: queries before that are not logged.
    const deadline = Date.now() + 20_000;
    while (!capture.log().includes('accepted new connection') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const extra of [['+subnet=10.1.2.0/24'], ['+subnet=10.1.2.0/24'], ['+subnet=10.2.3.0/24'], []]) {
      const r = await dig({ address: '127.0.0.1', port }, ['+recurse', 'www.example.test', 'A', ...extra]);
      t.is(r.status, 'NOERROR');
    }
    // unbound's dnstap thread sends its queue on its own schedule and has not always sent it by exit: give it time.
    await new Promise((resolve) => setTimeout(resolve, 3000));
  } finally {
    // unbound sends what it holds and STOP at exit; fstrm_capture then closes the file at SIGINT.
    await stopProcess(unbound.child, 'SIGTERM');
    await stopProcess(capture.child, 'SIGINT');
  }
  t.regex(capture.log(), /closed output file/);
});
test.after.always(() => g?.stop());

const hasPeers = existsSync(UNBOUND) && existsSync(FSTRM_CAPTURE);

(hasPeers ? test.serial : test.serial.skip)(
  "the CLIENT_QUERY messages of unbound's dnstap: ECS prefix or query address as client, forwarder queries skipped",
  async (t) => {
    const { queries, skipped } = await readQueryFormats(DNSTAP, readFileSync(DNSTAP))!;
    t.deepEqual(queries, [
      { name: 'www.example.test', type: 'A', client: '10.1.2.0/24', count: 2 },
      { name: 'www.example.test', type: 'A', client: '10.2.3.0/24', count: 1 },
      { name: 'www.example.test', type: 'A', client: '127.0.0.1/32', count: 1 },
    ]);
    t.true(skipped >= 1, 'unbound forwarded at least one query to the engine (FORWARDER_QUERY)');
  },
);

(hasPeers ? test.serial : test.serial.skip)('gslbd simulate replays the dnstap file: exactly the German network moves', async (t) => {
  const r = await run(process.execPath, [
    CLI,
    'simulate',
    '--config',
    join(dir, 'candidate.yaml'),
    '--against',
    join(dir, 'gslbd.yaml'),
    '--queries',
    DNSTAP,
    '--json',
  ]);
  t.is(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout) as ReplaySummary;
  t.is(s.queries, 4);
  t.deepEqual(s.moves, [{ from: 'east', to: 'west', queries: 2, networks: 1 }]);
});

(hasPeers ? test.serial : test.serial.skip)('a dnstap file cut inside a frame is an error naming the byte offset of the frame', async (t) => {
  const bytes = readFileSync(DNSTAP);
  const startLength = 8 + bytes.readUInt32BE(4);
  const cut = bytes.subarray(0, startLength + 10);
  await t.throwsAsync(readQueryFormats('tap', cut)!, {
    instanceOf: QueryFileError,
    message: new RegExp(`^tap: byte ${startLength}: a \\d+-octet frame runs past the end of the file$`),
  });
});

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(command, args, { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) => done({ code: err ? Number(err.code) : 0, stdout, stderr }));
  });
}
