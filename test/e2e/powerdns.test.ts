import { execFile } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { freePort } from '../support/freePort.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';
import { healthWithDown, testLocationDb, zonesConfig } from '../support/powerdnsFixture.js';

/**
 * The PowerDNS front door against a real pdns_server (configured from
 * examples/powerdns/pdns.conf) and the real dig: the engine runs in this process so tests can
 * publish state (location data, health) the way the engine does; pdns_server talks to it over
 * its Unix socket. The standalone listener of the same engine answers the same questions, so
 * answers and ECS scopes are compared with it as well as with exact expectations.
 */

let dir: string;
let gslbd: RunningGslbd;
let pdns: PdnsServer;
let standalonePort: number;
const socketPath = (): string => join(dir, 'gslbd.sock');

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-e2e-'));
  standalonePort = await freePort();
  const config = { ...zonesConfig(), listeners: { dns: [{ address: '127.0.0.1', port: standalonePort }], powerdns: { path: 'gslbd.sock' } } };
  writeFileSync(join(dir, 'gslbd.yaml'), stringify(config));
  gslbd = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  const snap = gslbd.engine.snapshot;
  gslbd.engine.publish({ ...snap, env: { ...snap.env, geo: testLocationDb() } });
  // The example's settings: AXFR refused by PowerDNS itself (disable-axfr=yes; powerdnsProcess.test.ts).
  pdns = await startPdns({ socketPath: socketPath(), instance: 'e2e' });
});

test.after.always(async () => {
  await pdns?.stop();
  await gslbd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  status: string;
  flags: string[];
  answer: string[];
  authority: string[];
  additional: string[];
  /** ECS scope of the reply, undefined when it carried no ECS option. */
  scope: number | undefined;
  output: string;
}

/** Runs the real dig against `port` and keeps the parts the tests compare (records as `name ttl type data`). */
function dig(port: number, args: string[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    execFile('dig', ['@127.0.0.1', '-p', String(port), '+norec', '+time=3', '+tries=1', ...args], { timeout: 15000 }, (err, stdout) => {
      if (err && !stdout.includes('->>HEADER<<-')) return reject(new Error(`dig ${args.join(' ')}: ${err.message}\n${stdout}`));
      const text = stdout.slice(stdout.lastIndexOf(';; ->>HEADER<<-'));
      const section = (name: string): string[] => {
        const start = text.indexOf(`;; ${name} SECTION:\n`);
        if (start < 0) return [];
        const out: string[] = [];
        for (const line of text.slice(start).split('\n').slice(1)) {
          if (line.trim() === '' || line.startsWith(';')) break;
          out.push(
            line
              .replace(/\s+IN\s+/, ' ')
              .replace(/\s+/g, ' ')
              .trim(),
          );
        }
        return out;
      };
      const scope = /; CLIENT-SUBNET: \S+\/\d+\/(\d+)/.exec(text);
      resolve({
        status: /status: (\w+)/.exec(text)?.[1] ?? '',
        flags: (/;; flags:([^;]*);/.exec(text)?.[1] ?? '').trim().split(/\s+/),
        answer: section('ANSWER'),
        authority: section('AUTHORITY'),
        additional: section('ADDITIONAL'),
        scope: scope ? Number(scope[1]) : undefined,
        output: stdout,
      });
    });
  });
}

const viaPdns = (...args: string[]): Promise<Reply> => dig(pdns.port, args);
const viaStandalone = (...args: string[]): Promise<Reply> => dig(standalonePort, args);

test.serial('static records: exact answers, AA, additional processing, scope 0', async (t) => {
  const cases: [string[], string[], string[]][] = [
    [['static.example.test', 'A'], ['static.example.test. 60 A 192.0.2.20'], []],
    [['STATIC.example.TEST', 'AAAA'], ['STATIC.example.TEST. 60 AAAA 2001:db8::20'], []],
    [['mail.example.test', 'MX'], ['mail.example.test. 300 MX 10 mx.example.test.'], ['mx.example.test. 300 A 192.0.2.25']],
    [['txt.example.test', 'TXT'], ['txt.example.test. 300 TXT "say \\"hi\\""'], []],
    [['_sip._udp.example.test', 'SRV'], ['_sip._udp.example.test. 300 SRV 10 20 5060 sip.example.test.'], []],
    [['example.test', 'SOA'], ['example.test. 300 SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60'], []],
    [
      ['example.test', 'NS'],
      ['example.test. 300 NS ns1.example.test.', 'example.test. 300 NS ns2.example.test.'],
      ['ns1.example.test. 300 A 192.0.2.53', 'ns2.example.test. 300 A 192.0.2.54'],
    ],
    [['www.other.test', 'A'], ['www.other.test. 300 A 192.0.2.70'], []],
  ];
  for (const [args, answer, additional] of cases) {
    const r = await viaPdns(...args, '+subnet=8.8.8.0/24');
    t.is(r.status, 'NOERROR', args.join(' '));
    t.true(r.flags.includes('aa'), args.join(' '));
    t.deepEqual([...r.answer].sort(), [...answer].sort(), args.join(' '));
    t.deepEqual([...r.additional].sort(), [...additional].sort(), args.join(' '));
    t.is(r.scope, 0, args.join(' '));
  }
});

test.serial('GSLB answers per client subnet: address and ECS scope, the same as the standalone listener', async (t) => {
  // subnet → [www A, scope]; the test data: 8.8.8.0/24 US, 193.0.0.0/20 NL, 202.12.26.0/23 JP, 2001:67c:2e8::/48 NL.
  const cases: [string, string, number][] = [
    ['8.8.8.0/24', '192.0.2.10', 24],
    ['193.0.14.0/24', '198.51.100.10', 20],
    ['202.12.27.0/24', '203.0.113.10', 23],
    ['1.1.1.0/24', '192.0.2.10', 5], // unknown location: the default DC, scoped to the unknown block 0.0.0.0/5
    ['193.0.14.7/32', '198.51.100.10', 20],
    ['2001:67c:2e8:12::/64', '198.51.100.10', 48], // IPv6 ECS
    ['::ffff:193.0.14.0/120', '198.51.100.10', 116], // IPv4-mapped: family 2, scope 96 + 20
    ['0.0.0.0/0', '192.0.2.10', 0], // /0: the resolver (127.0.0.1, unknown) decides, scope 0 (RFC 7871 §7.2.1)
  ];
  for (const [subnet, address, scope] of cases) {
    const p = await viaPdns('www.example.test', 'A', `+subnet=${subnet}`);
    t.deepEqual(p.answer, [`www.example.test. 30 A ${address}`], subnet);
    t.is(p.scope, scope, subnet);
    const s = await viaStandalone('www.example.test', 'A', `+subnet=${subnet}`);
    t.deepEqual([s.answer, s.scope], [p.answer, p.scope], `${subnet}: standalone listener`);
  }
  const aaaa = await viaPdns('www.example.test', 'AAAA', '+subnet=202.12.26.0/24');
  t.deepEqual([aaaa.answer, aaaa.scope], [['www.example.test. 30 AAAA 2001:db8:3::10'], 23]);
  const mx = await viaPdns('gmx.example.test', 'MX', '+subnet=193.0.14.0/24');
  t.deepEqual([mx.answer, mx.scope], [['gmx.example.test. 40 MX 20 mx2.example.test.'], 20]);
});

test.serial('NXDOMAIN and NODATA: SOA at the negative TTL, scope 0; empty non-terminals and wildcards as RFC 8020 / 4592', async (t) => {
  const soa = 'example.test. 60 SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60';
  const cases: [string[], string, string[]][] = [
    [['nx.example.test', 'A'], 'NXDOMAIN', []],
    [['static.example.test', 'MX'], 'NOERROR', []],
    [['ent.example.test', 'A'], 'NOERROR', []],
    [['x.ent.example.test', 'A'], 'NXDOMAIN', []],
    [['a\\032b.example.test', 'A'], 'NXDOMAIN', []],
    [['gmx.example.test', 'A'], 'NOERROR', []],
  ];
  for (const [args, status, answer] of cases) {
    const r = await viaPdns(...args, '+subnet=8.8.8.0/24');
    t.is(r.status, status, args.join(' '));
    t.deepEqual(r.answer, answer, args.join(' '));
    t.deepEqual(r.authority, [soa], args.join(' '));
    t.is(r.scope, 0, args.join(' '));
  }
  const wild = await viaPdns('Host.Wild.example.test', 'A');
  t.deepEqual([wild.status, wild.answer], ['NOERROR', ['Host.Wild.example.test. 300 A 192.0.2.88']]);
  t.is((await viaPdns('elsewhere.invalid', 'A')).status, 'REFUSED');
});

test.serial('a CNAME to a GSLB name: PowerDNS follows it and the scope is the GSLB scope', async (t) => {
  const eu = await viaPdns('alias.example.test', 'A', '+subnet=193.0.14.0/24');
  t.deepEqual(eu.answer, ['alias.example.test. 300 CNAME www.example.test.', 'www.example.test. 30 A 198.51.100.10']);
  t.is(eu.scope, 20);
  const jp = await viaPdns('alias.example.test', 'A', '+subnet=202.12.27.0/24');
  t.deepEqual(jp.answer, ['alias.example.test. 300 CNAME www.example.test.', 'www.example.test. 30 A 203.0.113.10']);
  t.is(jp.scope, 23);
});

test.serial('ANY over TCP returns every RRset, GSLB ones selected; over UDP PowerDNS sets TC', async (t) => {
  const www = await viaPdns('www.example.test', 'ANY', '+tcp', '+subnet=8.8.8.0/24');
  t.deepEqual([...www.answer].sort(), ['www.example.test. 30 A 192.0.2.10', 'www.example.test. 30 AAAA 2001:db8:1::10']);
  t.is(www.scope, 24);
  const apex = await viaPdns('example.test', 'ANY', '+tcp', '+subnet=8.8.8.0/24');
  t.deepEqual(apex.answer.filter((r) => !r.includes(' A ')).sort(), [
    'example.test. 300 NS ns1.example.test.',
    'example.test. 300 NS ns2.example.test.',
    'example.test. 300 SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 60',
  ]);
  t.deepEqual(
    apex.answer.filter((r) => r.includes(' A ')).map((r) => /^example\.test\. 20 A 192\.0\.2\.10[12]$/.test(r)),
    [true],
    apex.answer.join('\n'),
  );
  t.is(apex.scope, 24);
  const udp = await viaPdns('www.example.test', 'ANY', '+notcp', '+ignore');
  t.true(udp.flags.includes('tc'));
});

/** Runs pdnsutil on the test's PowerDNS configuration; resolves with its exit code and output. */
function pdnsutil(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) =>
    execFile('pdnsutil', ['--config-dir', pdns.configDir, ...args], { timeout: 30000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    ),
  );
}

test.serial('pdnsutil check-zone, check-all-zones and list-zone work on gslbd zones (the backend answers list); AXFR stays refused', async (t) => {
  const checked = await pdnsutil(['check-zone', 'example.test']);
  t.is(checked.code, 0, checked.output);
  t.regex(checked.output, /Checked \d+ records of 'example\.test', 0 errors, 0 warnings/, checked.output);
  const all = await pdnsutil(['check-all-zones']);
  t.is(all.code, 0, all.output);
  t.regex(all.output, /Checked 2 zones?, 0 had errors/, all.output);
  const listed = await pdnsutil(['list-zone', 'example.test']);
  t.is(listed.code, 0, listed.output);
  // list-zone writes owners relative to `$ORIGIN .`, without the trailing dot.
  for (const line of [/^example\.test\.?\s+300\s+IN\s+NS\s+ns1\.example\.test\.?$/m, /^example\.test\.?\s+300\s+IN\s+SOA\s/m])
    t.regex(listed.output, line, listed.output);
  for (const address of ['192.0.2.10', '198.51.100.10', '203.0.113.10']) {
    t.regex(listed.output, new RegExp(`^www\\.example\\.test\\.?\\s+30\\s+IN\\s+A\\s+${address.replaceAll('.', '\\.')}$`, 'm'), listed.output);
  }
  const r = await dig(pdns.port, ['example.test', 'AXFR']).catch((e: Error) => ({ output: e.message }) as Reply);
  t.notRegex(r.output, /\sIN\s+A\s/, 'disable-axfr=yes (the example) still refuses transfers');
});

/** Nine answers for rr.example.test from the same client: they must cycle through the pool with period 3. */
async function rotation(t: import('ava').ExecutionContext, ...args: string[]): Promise<void> {
  const seen: string[] = [];
  for (let i = 0; i < 9; i++) {
    const r = await viaPdns('rr.example.test', 'A', ...args);
    t.is(r.answer.length, 1);
    seen.push(r.answer[0]!.split(' ').pop()!);
  }
  for (let i = 3; i < seen.length; i++) t.is(seen[i], seen[i - 3], `${args.join(' ')} period 3: ${seen.join(' ')}`);
  t.deepEqual(new Set(seen.slice(0, 3)), new Set(['192.0.2.1', '192.0.2.2', '192.0.2.3']), `${args.join(' ')}: ${seen.join(' ')}`);
}

test.serial('round-robin rotates through PowerDNS, one step per query, also for answers of scope 0', async (t) => {
  await rotation(t, '+subnet=8.8.8.0/24');
  // ECS /0 and no ECS from an unknown resolver: scope 0 (or no ECS at all), so PowerDNS's caches
  // would freeze them: the example configuration keeps those caches off.
  await rotation(t, '+subnet=0.0.0.0/0');
  await rotation(t);
});

test.serial('a health change shows in the very next answer through PowerDNS', async (t) => {
  const eu = async (): Promise<Reply> => viaPdns('www.example.test', 'A', '+subnet=193.0.14.0/24');
  const anyClient = async (): Promise<Reply> => viaPdns('www.example.test', 'A', '+subnet=0.0.0.0/0');
  t.deepEqual((await eu()).answer, ['www.example.test. 30 A 198.51.100.10']);
  t.deepEqual((await anyClient()).answer, ['www.example.test. 30 A 192.0.2.10']);
  const before = gslbd.engine.snapshot;
  gslbd.engine.publish({ ...before, env: { ...before.env, health: healthWithDown('web/eu-west/198.51.100.10', 'web/us-east/192.0.2.10') } });
  try {
    const down = await eu();
    t.deepEqual(down.answer, ['www.example.test. 30 A 203.0.113.10']);
    t.is(down.scope, 20);
    const alias = await viaPdns('alias.example.test', 'A', '+subnet=193.0.14.0/24');
    t.deepEqual(alias.answer, ['alias.example.test. 300 CNAME www.example.test.', 'www.example.test. 30 A 203.0.113.10']);
    // Scope 0: the resolver's own (unknown) location; its default DC is down, the live ones answer.
    const zero = await anyClient();
    t.deepEqual([zero.answer, zero.scope], [['www.example.test. 30 A 203.0.113.10'], 0]);
  } finally {
    gslbd.engine.publish(before);
  }
  t.deepEqual((await eu()).answer, ['www.example.test. 30 A 198.51.100.10']);
  t.deepEqual((await anyClient()).answer, ['www.example.test. 30 A 192.0.2.10']);
});

test.serial('every endpoint down: the fail-safe answer, never NXDOMAIN', async (t) => {
  const before = gslbd.engine.snapshot;
  gslbd.engine.publish({
    ...before,
    env: { ...before.env, health: healthWithDown('web/us-east/192.0.2.10', 'web/eu-west/198.51.100.10', 'web/ap-northeast/203.0.113.10') },
  });
  try {
    const r = await viaPdns('www.example.test', 'A', '+subnet=193.0.14.0/24');
    t.deepEqual([r.status, r.answer], ['NOERROR', ['www.example.test. 30 A 192.0.2.10']]);
  } finally {
    gslbd.engine.publish(before);
  }
});

test.serial('metrics count PowerDNS requests and connections by instance', async (t) => {
  const text = await gslbd.metrics.registry.metrics();
  t.regex(text, /gslbd_powerdns_requests_total{method="lookup",outcome="ok"} \d+/);
  t.regex(text, /gslbd_powerdns_requests_total{method="list",outcome="ok"} [1-9]/);
  t.regex(text, /gslbd_powerdns_connections{instance="e2e"} [1-9]/);
  t.regex(text, /gslbd_powerdns_selection_reuses_total [1-9]/);
});

test.serial('qtype counts through PowerDNS: its ANY lookups are counted as ANY, and the GSLB records it was answered from per record', async (t) => {
  const series = async (): Promise<Map<string, number>> => {
    const text = await gslbd.metrics.registry.metrics();
    return new Map(
      text
        .split('\n')
        .filter((l) => l.startsWith('gslbd_powerdns_lookups_by_qtype_total') || l.startsWith('gslbd_gslb_record_selections_total'))
        .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
    );
  };
  const delta = (after: Map<string, number>, before: Map<string, number>, key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const before = await series();
  // A client asks AAAA; PowerDNS (consistent-backends=yes) asks the backend for ANY of the name.
  const r = await viaPdns('www.example.test', 'AAAA', '+subnet=193.0.0.0/20');
  t.is(r.status, 'NOERROR');
  t.is(r.answer.length, 1);
  const after = await series();
  t.true(delta(after, before, 'gslbd_powerdns_lookups_by_qtype_total{qtype="ANY"}') >= 1);
  t.is(delta(after, before, 'gslbd_powerdns_lookups_by_qtype_total{qtype="AAAA"}'), 0, 'the client type never reaches the backend: no AAAA is claimed');
  // The ANY lookup selected both GSLB records of the name once (PowerDNS's second lookup of the query reuses the selection).
  t.is(delta(after, before, 'gslbd_gslb_record_selections_total{record="www.example.test",type="AAAA"}'), 1);
  t.is(delta(after, before, 'gslbd_gslb_record_selections_total{record="www.example.test",type="A"}'), 1);
});
