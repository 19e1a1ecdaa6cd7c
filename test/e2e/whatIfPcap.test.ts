import test from 'ava';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCaptureQueries } from '../../src/cli/queryLog/captureQueries.js';
import type { ReplaySummary } from '../../src/cli/whatIfReplay.js';
import type { RunningGslbd } from '../../src/process/gslbdProcess.js';
import { dig } from '../support/dig.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { startGermanyCandidateBed } from '../support/germanyCandidate.js';

/**
 * Replay from a packet capture: tcpdump (Debian's; libpcap format) and dumpcap (Wireshark's;
 * pcapng) capture the loopback at the same time while dig asks a running engine over UDP and over
 * TCP, with and without ECS; the capture's queries (the ECS prefix as client, else the source
 * address) are replayed by `gslbd simulate --against FILE` and `gslbd ctl what-if`, and exactly
 * the German networks move when the candidate sends Germany elsewhere.
 */

const TCPDUMP = '/usr/bin/tcpdump';
const DUMPCAP = '/usr/bin/dumpcap';
const dir = mkdtempSync(join(tmpdir(), 'gslbd-pcap-'));
const CAPTURE = join(dir, 'queries.pcap');
const CAPTURE_NG = join(dir, 'queries.pcapng');
/** The queries dig sends (below), as each capture must read them. */
const SENT = [
  { name: 'www.example.test', type: 'A', client: '10.1.2.0/24', count: 2 },
  { name: 'www.example.test', type: 'A', client: '10.2.3.0/24', count: 1 },
  { name: 'www.example.test', type: 'A', client: '127.0.0.1/32', count: 2 },
  { name: 'www.example.test', type: 'A', client: '10.1.9.0/24', count: 1 },
  { name: 'www.example.test', type: 'AAAA', client: '10.1.9.0/24', count: 1 },
];
let g: RunningGslbd;

test.before(async (t) => {
  for (const tool of [TCPDUMP, DUMPCAP]) {
    if (!existsSync(tool)) {
      if (process.env.CI === 'true') throw new Error(`${tool} is missing (test/setup.sh installs tcpdump and wireshark-common)`);
      return;
    }
  }
  g = await startGermanyCandidateBed(dir);
  const server = g.dns.bound[0]!;
  // tcpdump -U: each packet is written at once; -n: no name lookups. dumpcap writes pcapng.
  // Each tool says it listens before its capture is live (dumpcap missed the first query once):
  // probe datagrams to a second port, too short to be a DNS message, go out until both files hold
  // one; the readers skip them as frames without a query.
  const probePort = await freeUdpPort();
  const filter = `port ${server.port} or port ${probePort}`;
  const captures = [
    await startCapture(TCPDUMP, ['-i', 'lo', '-n', '-U', '-w', CAPTURE, filter], 'listening on'),
    await startCapture(DUMPCAP, ['-i', 'lo', '-q', '-f', filter, '-w', CAPTURE_NG], 'Capturing on'),
  ];
  await probeUntilCaptured(probePort, [CAPTURE, CAPTURE_NG]);
  const ask = async (extra: string[]): Promise<void> => {
    const r = await dig({ address: server.address, port: server.port }, ['www.example.test', 'A', ...extra]);
    t.is(r.status, 'NOERROR');
  };
  await ask(['+subnet=10.1.2.0/24']);
  await ask(['+subnet=10.1.2.0/24']);
  await ask(['+subnet=10.2.3.0/24']);
  await ask([]);
  await ask(['+tcp']);
  // Two queries on one TCP connection (RFC 7766 §6.2.1): the stream carries two length-framed messages.
  await ask(['+tcp', '+keepopen', '+subnet=10.1.9.0/24', 'www.example.test', 'AAAA', '+subnet=10.1.9.0/24']);
  // tcpdump and dumpcap stop at SIGINT without reading what is still in the kernel's capture
  // buffer: wait until each file holds the seven queries (a loaded machine lags here).
  const deadline = Date.now() + 20_000;
  for (const file of [CAPTURE, CAPTURE_NG])
    while ((await capturedQueries(file)) < 7 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const capture of captures) {
    const exited = new Promise((resolve) => capture.once('exit', resolve));
    capture.kill('SIGINT');
    await exited;
  }
});
test.after.always(() => g?.stop());

async function startCapture(tool: string, args: string[], ready: string): Promise<ChildProcess> {
  const capture = spawn(tool, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    capture.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes(ready)) resolve();
    });
    capture.once('exit', (code) => reject(new Error(`${tool} exited ${code}: ${stderr}`)));
  });
  return capture;
}

const PROBE = Buffer.from('gslbdprobe');

/** A loopback UDP port nothing listens on (bound, read and released). */
async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(resolve));
  return port;
}

/** Sends {@link PROBE} to `port` every 50 ms until every file holds it (20 s at most). */
async function probeUntilCaptured(port: number, files: string[]): Promise<void> {
  const socket = createSocket('udp4');
  const holds = (file: string): boolean => existsSync(file) && readFileSync(file).includes(PROBE);
  try {
    const deadline = Date.now() + 20_000;
    while (!files.every(holds)) {
      if (Date.now() > deadline) throw new Error(`a probe never reached ${files.filter((f) => !holds(f)).join(', ')}`);
      socket.send(PROBE, port, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    socket.close();
  }
}

/** Queries in a capture so far; 0 while its header is not written yet. */
async function capturedQueries(file: string): Promise<number> {
  try {
    return (await readCaptureQueries(file, readFileSync(file))).queries.reduce((n, q) => n + q.count, 0);
  } catch {
    return 0;
  }
}

const hasTcpdump = existsSync(TCPDUMP) && existsSync(DUMPCAP);

(hasTcpdump ? test.serial : test.serial.skip)(
  'the queries of a tcpdump capture (pcap), over UDP and TCP: ECS prefix or source address as client, responses skipped',
  async (t) => {
    const { queries, skipped } = await readCaptureQueries(CAPTURE, readFileSync(CAPTURE));
    t.deepEqual(queries, SENT);
    t.true(skipped >= 7, 'the responses and the TCP segments without a query');
  },
);

(hasTcpdump ? test.serial : test.serial.skip)('the same queries from the pcapng capture dumpcap made of the same traffic', async (t) => {
  t.is(readFileSync(CAPTURE_NG).readUInt32LE(0), 0x0a0d0d0a, 'a pcapng section header');
  t.deepEqual((await readCaptureQueries(CAPTURE_NG, readFileSync(CAPTURE_NG))).queries, SENT);
});

(hasTcpdump ? test.serial : test.serial.skip)('gslbd simulate and ctl what-if replay a capture: exactly the German network moves', async (t) => {
  const simulate = await cliRun(['simulate', '--config', join(dir, 'candidate.yaml'), '--against', join(dir, 'gslbd.yaml'), '--queries', CAPTURE, '--json']);
  t.is(simulate.code, 0, simulate.stderr);
  const s = JSON.parse(simulate.stdout) as ReplaySummary;
  t.is(s.queries, 7);
  t.deepEqual(s.moves, [{ from: 'east', to: 'west', queries: 3, networks: 2 }]);
  t.deepEqual(s.topNetworks.map((n) => n.client).sort(), ['10.1.2.0/24', '10.1.9.0/24']);
  const ctl = await cliRun(['ctl', '--admin', `http://127.0.0.1:${g.admin!.port}`, 'what-if', '--queries', CAPTURE, '--what-if', 'down=west', '--json']);
  t.is(ctl.code, 0, ctl.stderr);
  t.deepEqual((JSON.parse(ctl.stdout) as ReplaySummary).moves, [{ from: 'west', to: 'east', queries: 3, networks: 2 }]);
});

function cliRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) =>
      done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}
