import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import type { ReplaySummary } from '../../src/cli/whatIfReplay.js';
import type { RunningGslbd } from '../../src/process/gslbdProcess.js';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { startGermanyCandidateBed } from '../support/germanyCandidate.js';

/**
 * Replay from dnsperf data files: the same files real dnsperf (Debian's, 2.x) sends to a running
 * engine — text (`NAME TYPE`, with the ECS of dnsperf's `-E 8:HEX`) and binary (`-B`, each query a
 * length-prefixed message with its own ECS) — are replayed by `gslbd simulate --against FILE`, and
 * exactly the German queries move when the candidate sends Germany elsewhere.
 */

const DNSPERF = '/usr/bin/dnsperf';
const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnsperf-'));
const TEXT = join(dir, 'queries.txt');
const BINARY = join(dir, 'queries.bin');
/** dnsperf's `-E` value for ECS 10.1.2.0/24 (RFC 7871 §6: family 1, source 24, scope 0, three address octets). */
const GERMAN_ECS = '8:000118000a0102';
let g: RunningGslbd;

/** One query in dnsperf's binary form: a 2-octet length, then the message (with ECS when `ecs` is given). */
function binaryQuery(name: string, ecs?: string): Buffer {
  const options = ecs ? [{ code: 8 as const, family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: ecs }] : [];
  const message = dnsPacket.encode({
    type: 'query',
    id: 1,
    flags: 0,
    questions: [{ name, type: 'A' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, extendedRcode: 0, ednsVersion: 0, flag_do: false, options }],
  });
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

test.before(async () => {
  if (!existsSync(DNSPERF)) {
    if (process.env.CI === 'true') throw new Error(`${DNSPERF} is missing (test/setup.sh installs dnsperf)`);
    return;
  }
  writeFileSync(TEXT, '; dnsperf comment lines are skipped\nwww.example.test A\nwww.example.test. a\n\nwww.example.test TYPE1\nother.example.test AAAA\n');
  writeFileSync(
    BINARY,
    Buffer.concat([binaryQuery('www.example.test', '10.1.2.0'), binaryQuery('www.example.test', '10.2.3.0'), binaryQuery('www.example.test')]),
  );
  g = await startGermanyCandidateBed(dir);
});
test.after.always(() => g?.stop());

const hasDnsperf = existsSync(DNSPERF);

(hasDnsperf ? test.serial : test.serial.skip)('real dnsperf sends every query of both files to the engine and gets answers', async (t) => {
  const server = g.dns.bound[0]!;
  for (const args of [
    ['-d', TEXT, '-E', GERMAN_ECS],
    ['-B', '-d', BINARY],
  ]) {
    const r = await run(DNSPERF, ['-s', server.address, '-p', String(server.port), '-n', '1', '-t', '5', ...args]);
    t.is(r.code, 0, r.stderr);
    const sent = args.includes('-B') ? 3 : 4;
    t.regex(r.stdout, new RegExp(`Queries completed:\\s+${sent} \\(100\\.00%\\)`), `${args.join(' ')}: ${r.stdout}`);
    t.notRegex(r.stdout + r.stderr, /Warning/);
  }
});

(hasDnsperf ? test.serial : test.serial.skip)('simulate replays a dnsperf text file with -E ECS: every www query moves; without ECS none does', async (t) => {
  const withEcs = await simulate(['--queries', TEXT, '--edns', GERMAN_ECS]);
  t.is(withEcs.queries, 4);
  t.deepEqual(withEcs.moves, [{ from: 'east', to: 'west', queries: 3, networks: 1 }]);
  const withoutEcs = await simulate(['--queries', TEXT]);
  t.deepEqual(withoutEcs.moves, []);
  const fromGermany = await simulate(['--queries', TEXT, '--source', '10.1.7.7']);
  t.deepEqual(fromGermany.moves, [{ from: 'east', to: 'west', queries: 3, networks: 1 }]);
});

(hasDnsperf ? test.serial : test.serial.skip)(
  'simulate replays a dnsperf binary file: each query with its own ECS, exactly the German one moves',
  async (t) => {
    const s = await simulate(['--queries', BINARY]);
    t.is(s.queries, 3);
    t.deepEqual(s.moves, [{ from: 'east', to: 'west', queries: 1, networks: 1 }]);
    t.deepEqual(
      s.topNetworks.map((n) => n.client),
      ['10.1.2.0/24'],
    );
  },
);

(hasDnsperf ? test.serial : test.serial.skip)('a line dnsperf would refuse is an error naming the file and the line', async (t) => {
  const bad = join(dir, 'bad.txt');
  writeFileSync(bad, 'www.example.test A\nwww.example.test NOSUCHTYPE\n');
  const r = await run(process.execPath, [CLI, 'simulate', '--config', join(dir, 'candidate.yaml'), '--against', join(dir, 'gslbd.yaml'), '--queries', bad]);
  t.is(r.code, 1);
  t.regex(r.stderr, new RegExp(`${bad}: line 2: unknown query type "NOSUCHTYPE"`));
});

async function simulate(args: string[]): Promise<ReplaySummary> {
  const r = await run(process.execPath, [CLI, 'simulate', '--config', join(dir, 'candidate.yaml'), '--against', join(dir, 'gslbd.yaml'), '--json', ...args]);
  if (r.code !== 0) throw new Error(`simulate ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as ReplaySummary;
}

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(command, args, { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) => done({ code: err ? Number(err.code) : 0, stdout, stderr }));
  });
}
