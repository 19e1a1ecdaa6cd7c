import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parse, stringify } from 'yaml';
import { buildQuery, tcpQuery, udpQuery } from '../support/dnsClient.js';
import { REPO_ROOT, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { freePort } from '../support/freePort.js';
import { seededUint32 } from '../support/seededRandom.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The CoreDNS bridge end to end: the real engine process (`gslbd serve`, the quickstart scenario
 * on the real GeoLite data, compact listener only) behind the real `coredns-gslb` binary that
 * test/setup.sh built, queried with the real `dig`. Then the engine is killed (stale answers for
 * blocks seen before, the static fail-safe zone of the `file` plugin for the others, never
 * NXDOMAIN) and restarted (answers resume without restarting CoreDNS).
 */

const COREDNS = join(REPO_ROOT, 'coredns-bridge/bin/coredns-gslb');

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

/** CoreDNS processes this worker started; `after.always` kills whatever a failed hook or test left. */
const children = new Set<Proc>();

function spawnLogged(cmd: string, args: string[]): Proc {
  const child = spawn(cmd, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const p = { child, output: () => out, exited };
  children.add(p);
  void exited.then(() => children.delete(p));
  return p;
}

/** SIGTERM, then SIGKILL after 5 s. */
async function stopProc(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const killer = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await p.exited;
  clearTimeout(killer);
}

/** Waits for `check`; fails at once, with its output, when `proc` exits first. */
function until(what: string, check: () => boolean | Promise<boolean>, ms: number, proc?: Proc): Promise<number> {
  return waitFor(
    what,
    () => {
      if (proc && proc.child.exitCode !== null) throw new Error(`${what}: process exited:\n${proc.output()}`);
      return check();
    },
    ms,
    { everyMs: 100, detail: () => proc?.output() ?? '' },
  );
}

async function readyStatus(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/ready`)).status;
  } catch {
    return 0;
  }
}

interface Dig {
  status: string;
  flags: string[];
  answer: string[];
  authority: string[];
  question: string;
  subnet: string | undefined;
}

function dig(port: number, ...args: string[]): Promise<Dig> {
  return new Promise((done, fail) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), '+norec', '+time=5', '+tries=1', ...args], { timeout: 20000 }, (err, stdout) => {
      if (err && !stdout) return fail(err);
      const section = (name: string): string[] => {
        const start = stdout.indexOf(`;; ${name} SECTION:\n`);
        if (start < 0) return [];
        const lines: string[] = [];
        for (const line of stdout.slice(start).split('\n').slice(1)) {
          if (line.trim() === '') break;
          lines.push(line.replace(/\s+/g, ' ').trim());
        }
        return lines;
      };
      done({
        status: /status: (\w+)/.exec(stdout)?.[1] ?? 'TIMEOUT',
        flags: (/;; flags: ([^;]*);/.exec(stdout)?.[1] ?? '').trim().split(' '),
        answer: section('ANSWER'),
        authority: section('AUTHORITY'),
        question: section('QUESTION')[0] ?? '',
        subnet: /; CLIENT-SUBNET: (\S+)/.exec(stdout)?.[1],
      });
    });
  });
}

interface Fixture {
  dir: string;
  engineConfig: string;
  dnsPort: number;
  readyPort: number;
  metricsPort: number;
  engine: EngineProcess;
  coredns: Proc;
}

/** The real GeoLite data takes seconds to load (tens of seconds on a busy machine). */
const ENGINE_START_MS = 120_000;

let fx: Fixture;

test.before(async () => {
  if (!existsSync(COREDNS)) throw new Error(`${COREDNS} is missing: run test/setup.sh (it builds the binary)`);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-cd-'));
  const socket = join(dir, 'engine.sock');
  const config = parse(readFileSync(join(REPO_ROOT, 'examples/quickstart.yaml'), 'utf8')) as Record<string, unknown>;
  config.listeners = { compact: { path: socket } };
  // The quickstart's compiled cache in this test's directory (the engine's own directory goes with
  // each engine): the first start builds it, the restart after the kill loads it, as a production
  // restart does (src/capabilities/geo/README.md, "Compiled file and CLI").
  (config.geo as Record<string, unknown>).compiled = join(dir, 'geo.gdb');
  // An answer larger than a 1232-byte UDP payload, for the size tests.
  const zone = (config.zones as { records: unknown[] }[])[0]!;
  zone.records.push(...Array.from({ length: 30 }, (_, i) => ({ name: 'big', type: 'TXT', data: `${String(i).padStart(2, '0')}${'x'.repeat(60)}` })));
  const engineConfig = stringify(config);
  // The operator's static fail-safe zone behind gslb (www differs from every GSLB answer, so the
  // test can tell who answered).
  writeFileSync(
    join(dir, 'failsafe.zone'),
    [
      '$ORIGIN example.test.',
      '@ 30 IN SOA ns1.example.test. hostmaster.example.test. 1 7200 3600 1209600 300',
      '@ 30 IN NS ns1.example.test.',
      'www 30 IN A 192.0.2.250',
      '',
    ].join('\n'),
  );
  const [dnsPort, readyPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const corefile = join(dir, 'Corefile');
  writeFileSync(
    corefile,
    `example.test:${dnsPort} {
    bind 127.0.0.1
    errors
    ready 127.0.0.1:${readyPort} {
        monitor continuously
    }
    prometheus 127.0.0.1:${metricsPort}
    gslb {
        socket ${socket}
        timeout 500ms
        on_error stale fallthrough
        stale_ttl 10s
    }
    file ${join(dir, 'failsafe.zone')}
}
`,
  );
  const engine = await startEngine(engineConfig, { startTimeoutMs: ENGINE_START_MS });
  const coredns = spawnLogged(COREDNS, ['-conf', corefile]);
  fx = { dir, engineConfig, dnsPort, readyPort, metricsPort, engine, coredns };
  await until('CoreDNS ready (engine connected)', async () => (await readyStatus(readyPort)) === 200, 30000, coredns);
});

// Also after a failed `before`: whatever started is stopped, so the worker ends instead of hanging.
test.after.always(async () => {
  await Promise.all([...children].map(stopProc));
  await stopAllEngines();
  if (fx) rmSync(fx.dir, { recursive: true, force: true });
});

const www = (ip: string, ttl = 30): string => `www.example.test. ${ttl} IN A ${ip}`;

/** 1,000 distinct client /24s spread over the IPv4 unicast space (seeded: the same set every run). */
const CLIENT_BLOCKS: readonly string[] = (() => {
  const next = seededUint32(26);
  const blocks = new Set<string>();
  while (blocks.size < 1000) {
    const n = next();
    const first = 1 + ((n >>> 24) % 223);
    // Not 127/8, nor 203/8, whose 203.0.113.0/24 below must find no stale answer.
    if (first === 127 || first === 203) continue;
    blocks.add(`${first}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.0/24`);
  }
  return [...blocks];
})();

/** The address each client block gets for www.example.test A, 50 queries in flight at a time. */
async function answersByBlock(port: number): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < CLIENT_BLOCKS.length; i += 50) {
    await Promise.all(
      CLIENT_BLOCKS.slice(i, i + 50).map(async (block) => {
        const reply = await udpQuery({ address: '127.0.0.1', port }, { name: 'www.example.test', type: 'A', edns: { ecs: block } });
        out.set(block, `${reply.rcode} ${reply.answers.join(' ')}`);
      }),
    );
  }
  return out;
}

test.serial('GSLB answers through CoreDNS: the client subnet picks the data center, AA set, the engine scope echoed', async (t) => {
  // Scopes are the record's answer-class blocks: the largest block around the client in which
  // every network of the data gets the same data center (src/pipeline/selection/answerClasses.ts).
  const cases: [string, string, string][] = [
    ['8.8.8.0/24', '192.0.2.10', '8.8.8.0/24/17'],
    ['193.0.14.0/24', '198.51.100.10', '193.0.14.0/24/19'],
    ['202.12.27.0/24', '203.0.113.10', '202.12.27.0/24/23'],
    ['1.1.1.0/24', '192.0.2.10', '1.1.1.0/24/24'],
    ['::ffff:193.0.14.0/120', '198.51.100.10', '::ffff:193.0.14.0/120/115'],
  ];
  for (const [subnet, ip, echoed] of cases) {
    const r = await dig(fx.dnsPort, 'www.example.test', 'A', `+subnet=${subnet}`);
    t.is(r.status, 'NOERROR', subnet);
    t.true(r.flags.includes('aa'), `${subnet}: AA`);
    t.deepEqual(r.answer, [www(ip)], subnet);
    t.is(r.subnet, echoed, subnet);
  }
});

test.serial('static names, NODATA for a missing family, question case, CNAME, TCP, and no ECS without EDNS', async (t) => {
  const ns1 = await dig(fx.dnsPort, 'ns1.example.test', 'A', '+subnet=193.0.14.0/24');
  t.like(ns1, { status: 'NOERROR', answer: ['ns1.example.test. 300 IN A 192.0.2.53'], subnet: '193.0.14.0/24/0' });
  t.true(ns1.flags.includes('aa'));

  const nodata = await dig(fx.dnsPort, 'www.example.test', 'AAAA', '+subnet=193.0.14.0/24');
  t.is(nodata.status, 'NOERROR');
  t.deepEqual(nodata.answer, []);
  t.regex(nodata.authority[0] ?? '', /^example\.test\. \d+ IN SOA ns1\.example\.test\. hostmaster\.example\.test\. /);
  t.true(nodata.flags.includes('aa'));

  const cased = await dig(fx.dnsPort, 'WwW.ExAmPlE.TeSt', 'A', '+subnet=202.12.27.0/24');
  t.is(cased.question, ';WwW.ExAmPlE.TeSt. IN A');
  t.deepEqual(cased.answer, ['WwW.ExAmPlE.TeSt. 30 IN A 203.0.113.10']);

  const alias = await dig(fx.dnsPort, 'alias.example.test', 'A', '+subnet=193.0.14.0/24');
  t.deepEqual(alias.answer, ['alias.example.test. 300 IN CNAME www.example.test.', www('198.51.100.10')]);
  t.is(alias.subnet, '193.0.14.0/24/19');

  const tcp = await dig(fx.dnsPort, 'www.example.test', 'A', '+tcp', '+subnet=193.0.14.0/24');
  t.like(tcp, { status: 'NOERROR', answer: [www('198.51.100.10')], subnet: '193.0.14.0/24/19' });

  const v6 = await dig(fx.dnsPort, 'v6.example.test', 'AAAA', '+noedns');
  t.deepEqual(v6.answer, ['v6.example.test. 300 IN AAAA 2001:db8::10']);
  t.is(v6.subnet, undefined);

  const nx = await dig(fx.dnsPort, 'nope.example.test', 'A');
  t.is(nx.status, 'NXDOMAIN');
  t.true(nx.flags.includes('aa'));
});

test.serial('NOTIFY → NOTIMP; AXFR and IXFR REFUSED; MAILB NOTIMP, as on the standalone listener', async (t) => {
  const notify = await dig(fx.dnsPort, 'example.test', 'SOA', '+opcode=notify');
  t.is(notify.status, 'NOTIMP');
  const server = { address: '127.0.0.1', port: fx.dnsPort };
  for (const [qtype, rcode] of [
    [252, 5],
    [251, 5],
    [253, 4],
  ] as const) {
    const query = buildQuery({ name: 'example.test', type: 'A' });
    query.writeUInt16BE(qtype, query.length - 4);
    for (const reply of [await udpQuery(server, query), await tcpQuery(server, query)]) {
      t.deepEqual([reply.rcode, reply.answers, reply.authority], [rcode, [], []], `qtype ${qtype}`);
    }
  }
});

test.serial('malformed ECS is FORMERR through CoreDNS as on the standalone listener (RFC 7871 §6)', async (t) => {
  const server = { address: '127.0.0.1', port: fx.dnsPort };
  const ecs = (hex: string) => ({ code: 8, data: Buffer.from(hex, 'hex') });
  const cases: [string, { code: number; data: Buffer }[]][] = [
    ['two ECS options', [ecs('00011800c10e00'), ecs('00011800080808')]],
    ['source /0 with an address byte', [ecs('0001000008')]],
    ['a non-zero address octet beyond the prefix', [ecs('0001180008080805')]],
    ['bits set beyond the prefix', [ecs('0001140008080f')]],
    ['scope prefix set in a query', [ecs('00011810080808')]],
  ];
  for (const [what, options] of cases) {
    const reply = await udpQuery(server, { name: 'www.example.test', type: 'A', edns: { options } });
    t.deepEqual([reply.rcode, reply.answers], [1, []], what);
  }
  const good = await udpQuery(server, { name: 'www.example.test', type: 'A', edns: { options: [ecs('00011800c10e00')] } });
  t.deepEqual([good.rcode, good.answers], [0, ['www.example.test A 198.51.100.10']]);
});

test.serial('UDP answers fit 1232 bytes and the OPT advertises 1232 whatever the client asks; TCP carries everything', async (t) => {
  const server = { address: '127.0.0.1', port: fx.dnsPort };
  const udp = await udpQuery(server, { name: 'big.example.test', type: 'TXT', edns: { udpPayloadSize: 4096 } });
  t.true(udp.raw.length <= 1232, `${udp.raw.length} bytes over UDP`);
  t.true(udp.tc);
  t.is(udp.opt?.udpPayloadSize, 1232);
  const small = await udpQuery(server, { name: 'ns1.example.test', type: 'A', edns: { udpPayloadSize: 4096 } });
  t.is(small.opt?.udpPayloadSize, 1232);
  const tcp = await tcpQuery(server, { name: 'big.example.test', type: 'TXT', edns: { udpPayloadSize: 4096 } });
  t.false(tcp.tc);
  t.is(tcp.answers.length, 30);
});

test.serial(
  'engine killed: stale answers for blocks seen before, the fail-safe zone for others, never NXDOMAIN; restart resumes without restarting CoreDNS',
  async (t) => {
    t.timeout(300000);
    // Every recent client block of a busy name keeps its own answer (the stale store is bounded by
    // memory, not by 16 blocks per name as it was, when most of these got the fail-safe).
    const live = await answersByBlock(fx.dnsPort);
    t.true(new Set(live.values()).size >= 2, 'the blocks get different data centers');
    fx.engine.signal('SIGKILL');
    await fx.engine.stop();
    await until('CoreDNS not ready once the engine is gone', async () => (await readyStatus(fx.readyPort)) === 503, 10000);

    const stale = await dig(fx.dnsPort, 'www.example.test', 'A', '+subnet=193.0.14.0/24');
    t.like(stale, { status: 'NOERROR', answer: [www('198.51.100.10', 10)], subnet: '193.0.14.0/24/19' });
    t.true(stale.flags.includes('aa'));
    // Another client inside the /19 block the engine's answer was valid for.
    const sameBlock = await dig(fx.dnsPort, 'www.example.test', 'A', '+subnet=193.0.1.0/24');
    t.deepEqual(sameBlock.answer, [www('198.51.100.10', 10)]);

    const afterKill = await answersByBlock(fx.dnsPort);
    const other = CLIENT_BLOCKS.filter((b) => afterKill.get(b) !== live.get(b));
    t.deepEqual(other, [], 'every client block gets its own last answer');

    // A block never answered before: the next plugin (file, the fail-safe zone) answers.
    const fallthrough = await dig(fx.dnsPort, 'www.example.test', 'A', '+subnet=203.0.113.0/24');
    t.like(fallthrough, { status: 'NOERROR', answer: [www('192.0.2.250')] });
    const unknown = await dig(fx.dnsPort, 'v6.example.test', 'AAAA');
    t.not(unknown.status, 'NXDOMAIN', 'a name the fail-safe zone lacks is the file plugin’s answer, not ours');

    const metrics = await (await fetch(`http://127.0.0.1:${fx.metricsPort}/metrics`)).text();
    t.regex(metrics, /coredns_gslb_requests_total\{result="stale",server="dns:\/\/127\.0\.0\.1:\d+"\} [1-9]/);
    t.regex(metrics, /coredns_gslb_requests_total\{result="fallthrough",server="dns:\/\/127\.0\.0\.1:\d+"\} [1-9]/);
    t.regex(metrics, /coredns_gslb_engine_up\{socket="[^"]+"\} 0/);

    const restarted = performance.now();
    fx.engine = await startEngine(fx.engineConfig, { startTimeoutMs: ENGINE_START_MS });
    t.like(
      fx.engine.logs().find((l) => l.msg === 'location data loaded'),
      { cache: 'fresh' },
      'the restart loads the compiled cache the first start wrote',
    );
    await until('CoreDNS ready again', async () => (await readyStatus(fx.readyPort)) === 200, 30000, fx.coredns);
    t.log(`engine restart: CoreDNS ready again ${Math.round(performance.now() - restarted)} ms after the exec`);
    // TTL 30 (not the stale 10): a fresh answer from the restarted engine.
    const fresh = await dig(fx.dnsPort, 'www.example.test', 'A', '+subnet=8.8.8.0/24');
    t.like(fresh, { status: 'NOERROR', answer: [www('192.0.2.10')], subnet: '8.8.8.0/24/17' });
    t.is(fx.coredns.child.exitCode, null, 'CoreDNS kept running');
  },
);
