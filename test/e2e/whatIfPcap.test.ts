import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPcapQueries } from '../../src/cli/pcapQueries.js';
import type { ReplaySummary } from '../../src/cli/whatIfReplay.js';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { dig } from '../support/dig.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { ipLocationRecord, writeMmdb } from '../support/mmdbWriter.js';

/**
 * Replay from a packet capture: tcpdump (Debian's) captures the loopback while dig asks a running
 * engine, with and without ECS; the capture's queries (the ECS prefix as client, else the source
 * address) are replayed by `gslbd simulate --against FILE` and `gslbd ctl what-if`, and exactly
 * the German network moves when the candidate sends Germany elsewhere.
 */

const TCPDUMP = '/usr/bin/tcpdump';
const dir = mkdtempSync(join(tmpdir(), 'gslbd-pcap-'));
const CAPTURE = join(dir, 'queries.pcap');
let g: RunningGslbd;

function config(germany: string): string {
  return `listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { address: 127.0.0.1, port: 0 } }
geo: { sources: [{ format: mmdb, path: clients.mmdb }] }
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
datacenters: [{ name: east }, { name: west }]
services: [{ name: web, endpoints: [{ dc: east, address: 192.0.2.1 }, { dc: west, address: 192.0.2.2 }] }]
records:
  - name: www.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
        - { when: { clientLocation: ["*.DE"] }, dcs: [${germany}] }
        - { dcs: [west] }
`;
}

test.before(async (t) => {
  if (!existsSync(TCPDUMP)) {
    if (process.env.CI === 'true') throw new Error(`${TCPDUMP} is missing (test/setup.sh installs tcpdump)`);
    return;
  }
  writeMmdb(join(dir, 'clients.mmdb'), 4, [
    { cidr: '10.1.0.0/16', record: ipLocationRecord('DE', 'Berlin', 'Berlin', 52.52, 13.4) },
    { cidr: '10.2.0.0/16', record: ipLocationRecord('US', 'Virginia', 'Ashburn', 39.04, -77.49) },
  ]);
  writeFileSync(join(dir, 'gslbd.yaml'), config('east'));
  writeFileSync(join(dir, 'candidate.yaml'), config('west'));
  g = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  const server = g.dns.bound[0]!;
  // -U: each packet is written at once; -n: no name lookups. Capturing begins once tcpdump says it listens.
  const capture = spawn(TCPDUMP, ['-i', 'lo', '-n', '-U', '-w', CAPTURE, 'udp', 'and', 'port', String(server.port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    capture.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes('listening on')) resolve();
    });
    capture.once('exit', (code) => reject(new Error(`tcpdump exited ${code}: ${stderr}`)));
  });
  const ask = async (extra: string[]): Promise<void> => {
    const r = await dig({ address: server.address, port: server.port }, ['www.example.test', 'A', ...extra]);
    t.is(r.status, 'NOERROR');
  };
  await ask(['+subnet=10.1.2.0/24']);
  await ask(['+subnet=10.1.2.0/24']);
  await ask(['+subnet=10.2.3.0/24']);
  await ask([]);
  // tcpdump stops at SIGINT without reading what is still in the kernel's capture buffer: wait
  // until the file holds the four queries and their four answers (a loaded machine lags here).
  const deadline = Date.now() + 20_000;
  while ((await capturedPackets()) < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const exited = new Promise((resolve) => capture.once('exit', resolve));
  capture.kill('SIGINT');
  await exited;
});
test.after.always(() => g?.stop());

/** Queries and skipped packets (the answers) in the capture so far; 0 while its header is not written yet. */
async function capturedPackets(): Promise<number> {
  try {
    const { queries, skipped } = await readPcapQueries(CAPTURE);
    return queries.reduce((n, q) => n + q.count, skipped);
  } catch {
    return 0;
  }
}

const hasTcpdump = existsSync(TCPDUMP);

(hasTcpdump ? test.serial : test.serial.skip)('the queries of a tcpdump capture: ECS prefix or source address as client, responses skipped', async (t) => {
  const { queries, skipped } = await readPcapQueries(CAPTURE);
  t.deepEqual(queries, [
    { name: 'www.example.test', type: 'A', client: '10.1.2.0/24', count: 2 },
    { name: 'www.example.test', type: 'A', client: '10.2.3.0/24', count: 1 },
    { name: 'www.example.test', type: 'A', client: '127.0.0.1/32', count: 1 },
  ]);
  t.is(skipped, 4, 'the four responses');
});

(hasTcpdump ? test.serial : test.serial.skip)('gslbd simulate and ctl what-if replay a capture: exactly the German network moves', async (t) => {
  const simulate = await cliRun(['simulate', '--config', join(dir, 'candidate.yaml'), '--against', join(dir, 'gslbd.yaml'), '--queries', CAPTURE, '--json']);
  t.is(simulate.code, 0, simulate.stderr);
  const s = JSON.parse(simulate.stdout) as ReplaySummary;
  t.is(s.queries, 4);
  t.deepEqual(s.moves, [{ from: 'east', to: 'west', queries: 2, networks: 1 }]);
  t.deepEqual(
    s.topNetworks.map((n) => n.client),
    ['10.1.2.0/24'],
  );
  const ctl = await cliRun(['ctl', '--admin', `http://127.0.0.1:${g.admin!.port}`, 'what-if', '--queries', CAPTURE, '--what-if', 'down=west', '--json']);
  t.is(ctl.code, 0, ctl.stderr);
  t.deepEqual((JSON.parse(ctl.stdout) as ReplaySummary).moves, [{ from: 'west', to: 'east', queries: 2, networks: 2 }]);
});

function cliRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) =>
      done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}
