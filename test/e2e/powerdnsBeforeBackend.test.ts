import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { stringify } from 'yaml';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { buildQuery, decodeReply, tcpQuery, udpExchange, type QuerySpec, type Reply } from '../support/dnsClient.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';
import { testLocationDb, zonesConfig } from '../support/powerdnsFixture.js';

/**
 * What PowerDNS 4.7 does with a question before gslbd sees it (issue 17, item 12): the real
 * pdns_server with the example's settings (examples/powerdns/pdns.conf: disable-axfr=yes,
 * edns-subnet-processing=yes, any-to-tcp default) in front of an engine in this process, one
 * question at a time, with the exact rcode, AA and TC of the reply and the number of `lookup`
 * requests gslbd received for it (0: PowerDNS answered alone). The table in
 * src/doors/powerdns/README.md ("What PowerDNS answers before gslbd") is this test; a PowerDNS
 * upgrade that changes any row fails it.
 */

let dir: string;
let gslbd: RunningGslbd;
let pdns: PdnsServer;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gslbd-pdns-before-'));
  writeFileSync(join(dir, 'gslbd.yaml'), stringify({ ...zonesConfig(), listeners: { powerdns: { path: 'gslbd.sock' } } }));
  gslbd = await startGslbd(join(dir, 'gslbd.yaml'), { signals: false, watchFile: false, logDestination: openSync(join(dir, 'gslbd.log'), 'a') });
  const snap = gslbd.engine.snapshot;
  gslbd.engine.publish({ ...snap, env: { ...snap.env, geo: testLocationDb() } });
  pdns = await startPdns({ socketPath: join(dir, 'gslbd.sock'), instance: 'before' });
});

test.after.always(async () => {
  await pdns?.stop();
  await gslbd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `lookup` requests gslbd has answered so far (the door's counter, read through the registry). */
async function lookups(): Promise<number> {
  const text = await gslbd.metrics.registry.metrics();
  let sum = 0;
  for (const m of text.matchAll(/^gslbd_powerdns_requests_total\{method="lookup"[^}]*\} (\d+)$/gm)) sum += Number(m[1]);
  return sum;
}

/** `message` with the question's class set to `qclass` (the class follows the name and the type). */
function withClass(message: Buffer, qclass: number): Buffer {
  let at = 12;
  while (message[at] !== 0) at += message[at]! + 1;
  const out = Buffer.from(message);
  out.writeUInt16BE(qclass, at + 3);
  return out;
}

/** An ECS option (code 8) with the raw payload `hex`. */
const ecs = (hex: string): QuerySpec['edns'] => ({ options: [{ code: 8, data: Buffer.from(hex, 'hex') }] });

interface Row {
  /** What the README's table calls it. */
  readonly name: string;
  readonly transport: 'udp' | 'tcp';
  readonly message: Buffer;
  /** rcode, AA, TC, answers and authority (`name type data`; authority empty unless given), the ECS option echoed (`source/scope`, or none), lookups gslbd got. */
  readonly expect: { rcode: number; aa: boolean; tc: boolean; answers: string[]; authority?: string[]; ecs: string | undefined; lookups: number };
}

const WWW = 'www.example.test';
const RESOLVER_ANSWER = [`${WWW} A 192.0.2.10`]; // the resolver 127.0.0.1 is in no location: the default, us-east
const APEX_SOA =
  'example.test SOA {"mname":"ns1.example.test","rname":"hostmaster.example.test","serial":2024010101,"refresh":3600,"retry":600,"expire":604800,"minimum":60}';
const ROWS: Row[] = [
  {
    name: 'class IN A (the control)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: {} }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
  {
    name: 'class ANY (255) A',
    transport: 'udp',
    message: withClass(buildQuery({ name: WWW, type: 'A', edns: {} }), 255),
    expect: { rcode: 0, aa: false, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
  {
    name: 'class CH A',
    transport: 'udp',
    message: withClass(buildQuery({ name: WWW, type: 'A', edns: {} }), 3),
    expect: { rcode: 4, aa: true, tc: false, answers: [], ecs: undefined, lookups: 0 },
  },
  {
    name: 'class HS A',
    transport: 'udp',
    message: withClass(buildQuery({ name: WWW, type: 'A', edns: {} }), 4),
    expect: { rcode: 5, aa: true, tc: false, answers: [], ecs: undefined, lookups: 0 },
  },
  {
    name: 'qtype RRSIG',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'RRSIG', edns: {} }),
    expect: { rcode: 5, aa: true, tc: false, answers: [], ecs: undefined, lookups: 1 },
  },
  {
    name: 'qtype ANY over UDP',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'ANY', edns: {} }),
    expect: { rcode: 0, aa: true, tc: true, answers: [], ecs: undefined, lookups: 0 },
  },
  {
    name: 'qtype ANY over TCP',
    transport: 'tcp',
    message: buildQuery({ name: WWW, type: 'ANY', edns: {} }),
    expect: { rcode: 0, aa: true, tc: false, answers: [`${WWW} A 192.0.2.10`, `${WWW} AAAA 2001:db8:1::10`], ecs: undefined, lookups: 3 },
  },
  {
    name: 'AXFR over UDP',
    transport: 'udp',
    message: buildQuery({ name: 'example.test', type: 'AXFR', edns: {} }),
    // A NODATA for type AXFR at the apex: the zone's SOA in the authority section.
    expect: { rcode: 0, aa: true, tc: false, answers: [], authority: [APEX_SOA], ecs: undefined, lookups: 2 },
  },
  {
    name: 'AXFR over TCP',
    transport: 'tcp',
    message: buildQuery({ name: 'example.test', type: 'AXFR' }),
    expect: { rcode: 9, aa: true, tc: false, answers: [], ecs: undefined, lookups: 0 },
  },
  {
    name: 'IXFR over UDP',
    transport: 'udp',
    message: buildQuery({ name: 'example.test', type: 'IXFR', edns: {} }),
    expect: { rcode: 5, aa: true, tc: false, answers: [], ecs: undefined, lookups: 0 },
  },
  {
    name: 'ECS 193.0.14.0/24 (the control: the subnet reaches gslbd)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000118' + '00' + 'c1000e') }),
    expect: { rcode: 0, aa: true, tc: false, answers: [`${WWW} A 198.51.100.10`], ecs: '24/20', lookups: 3 },
  },
  {
    name: 'ECS source prefix 0 (0.0.0.0/0)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('00010000') }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: '0/0', lookups: 3 },
  },
  {
    name: 'ECS truncated (family only)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('0001') }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
  {
    name: 'ECS IPv4 source prefix 33 (oversize)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000121' + '00' + 'c1000e0000') }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
  {
    name: 'ECS IPv6 source prefix 129 (oversize)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000281' + '00' + '2001067c02e8' + '00'.repeat(11)) }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
  {
    name: 'ECS /24 with a fourth address byte',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000118' + '00' + 'c1000e05') }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
  {
    name: 'ECS 193.0.14.0/20 (address bits set beyond the prefix)',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000114' + '00' + 'c1000e') }),
    expect: { rcode: 0, aa: true, tc: false, answers: [`${WWW} A 198.51.100.10`], ecs: '20/20', lookups: 3 },
  },
  {
    name: 'ECS with a non-zero scope in the query',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000118' + '10' + 'c1000e') }),
    expect: { rcode: 0, aa: true, tc: false, answers: [`${WWW} A 198.51.100.10`], ecs: '24/20', lookups: 3 },
  },
  {
    name: 'ECS of family 3',
    transport: 'udp',
    message: buildQuery({ name: WWW, type: 'A', edns: ecs('000318' + '00' + 'c1000e') }),
    expect: { rcode: 0, aa: true, tc: false, answers: RESOLVER_ANSWER, ecs: undefined, lookups: 3 },
  },
];

function observed(r: Reply, lookupsDelta: number): Row['expect'] {
  return {
    rcode: r.rcode,
    aa: r.aa,
    tc: r.tc,
    answers: r.answers,
    authority: r.authority,
    ecs: r.ecs ? `${r.ecs.sourcePrefix}/${r.ecs.scopePrefix}` : undefined,
    lookups: lookupsDelta,
  };
}

test.serial('what PowerDNS 4.7 answers before gslbd sees a question: rcode, AA, TC, answers, ECS and the lookups gslbd gets, row by row', async (t) => {
  const server = { address: pdns.address, port: pdns.port };
  const got: Record<string, Row['expect']> = {};
  const want: Record<string, Row['expect']> = {};
  for (const row of ROWS) {
    const before = await lookups();
    let reply: Reply;
    if (row.transport === 'udp') {
      const raw = await udpExchange(server, row.message, 5000);
      if (!raw) throw new Error(`${row.name}: no reply`);
      reply = decodeReply(raw);
    } else reply = await tcpQuery(server, row.message, 5000);
    got[row.name] = observed(reply, (await lookups()) - before);
    want[row.name] = { authority: [], ...row.expect };
  }
  t.deepEqual(got, want);
});
