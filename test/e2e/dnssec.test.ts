import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { startCoredns, type CorednsProcess } from '../support/corednsProcess.js';
import { delv } from '../support/delv.js';
import { buildQuery, tcpExchange, frame, udpQuery, decodeReply } from '../support/dnsClient.js';
import { makeKeys, type TestKey } from '../support/dnssecKeys.js';
import { BIG_COUNT, signedDeploymentConfig } from '../support/dnssecDeployment.js';
import { REPO_ROOT, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { fixtureLocationFiles, WWW } from '../support/fixtureDeployment.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';
import { replaceOnce } from '../support/replaceOnce.js';
import { flipAddress, startTamperingRelay, type TamperingRelay } from '../support/tamperingRelay.js';
import { startUnbound, type Unbound } from '../support/unbound.js';

/**
 * DNSSEC for GSLB answers through every front door, proven by real validating resolvers: Debian's
 * unbound (in front of each door, with the subnet cache, so each ECS subnet gets its own
 * validated answer) and BIND's delv.
 *
 * - standalone listener: gslbd signs (`src/capabilities/dnssec/`). `example.test` has a KSK and a
 *   ZSK (ECDSA P-256) made by BIND's dnssec-keygen, `ed.test` one Ed25519 key made by gslbd;
 * - PowerDNS: live-signs with the same keys, which gslbd's remote backend hands it (NSEC3 narrow);
 * - CoreDNS: its `dnssec` plugin signs `example.test` with keys of its own (the Corefile of
 *   `examples/coredns/Corefile.dnssec`).
 *
 * Trust anchors are DS records computed by BIND's dnssec-dsfromkey. Proof that validation
 * happens: a relay that changes the address in the signed answer on its way to unbound makes it
 * SERVFAIL through every door, and a trust anchor of another key makes every answer fail.
 */

type DoorName = 'standalone' | 'powerdns' | 'coredns';

interface Door {
  /** The validating resolver in front of the door. */
  readonly unbound: Unbound;
  /** An unbound whose queries pass a relay that flips the ap address in replies. */
  readonly relayed: Unbound;
  readonly server: { address: string; port: number };
  /** The trust anchor (DS line) of each zone the door signs. */
  readonly anchors: Readonly<Record<string, string>>;
  /** What a nonexistent name gets: NOERROR (compact denial, black lies) or NXDOMAIN (NSEC3). */
  readonly nxStatus: 'NOERROR' | 'NXDOMAIN';
}

let keyDir: string;
let engine: EngineProcess;
let pdns: PdnsServer | undefined;
let coredns: CorednsProcess | undefined;
const unbounds: Unbound[] = [];
const relays: TamperingRelay[] = [];
let doors: Record<DoorName, Door>;
/** An unbound in front of the standalone listener whose trust anchor for example.test is another key's DS. */
let wrongAnchor: Unbound;
let exampleKeys: TestKey[];
let edKeys: TestKey[];
let corednsKeys: TestKey[];
let stranger: TestKey;

/** Starts an unbound, remembered for the after hook. */
async function unboundFor(stubs: { zone: string; address: string; port: number }[], trustAnchors: string[]): Promise<Unbound> {
  const u = await startUnbound({ stubs, trustAnchors });
  unbounds.push(u);
  return u;
}

/** A door's unbound, and one behind a relay that flips the ap endpoint's address in every reply. */
async function doorResolvers(server: { address: string; port: number }, anchors: Record<string, string>): Promise<Pick<Door, 'unbound' | 'relayed'>> {
  const relay = await startTamperingRelay(server, (reply) => flipAddress(reply, WWW.ap));
  relays.push(relay);
  const zones = Object.keys(anchors);
  const [unbound, relayed] = await Promise.all([
    unboundFor(
      zones.map((zone) => ({ zone, ...server })),
      Object.values(anchors),
    ),
    unboundFor(
      zones.map((zone) => ({ zone, address: relay.address, port: relay.port })),
      Object.values(anchors),
    ),
  ]);
  return { unbound, relayed };
}

test.before(async () => {
  keyDir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-keys-'));
  exampleKeys = makeKeys(keyDir, 'example.test', [{ ksk: true }, {}]);
  edKeys = makeKeys(keyDir, 'ed.test', [{ ksk: true, algorithm: 15, tool: 'gslbd' }]);
  corednsKeys = makeKeys(keyDir, 'example.test', [{ ksk: true }, {}]);
  [stranger] = makeKeys(keyDir, 'example.test', [{ ksk: true, tool: 'gslbd' }]) as [TestKey];
  engine = await startEngine(
    signedDeploymentConfig({
      exampleKeys: exampleKeys.map((k) => join(keyDir, k.base)),
      edKeys: edKeys.map((k) => join(keyDir, k.base)),
      listeners: '  powerdns: { path: pdns.sock }\n  compact: { path: compact.sock }\n',
    }),
    { files: fixtureLocationFiles() },
  );
  const up = engine.logs().find((l) => l.msg === 'gslbd up')!;
  const example = readFileSync(join(REPO_ROOT, 'examples/coredns/Corefile.dnssec'), 'utf8');
  const [p, c] = await Promise.allSettled([
    startPdns({ socketPath: String(up.powerdns), instance: 'dnssec', settings: { 'remote-dnssec': 'yes' } }),
    startCoredns((port, readyPort) => {
      let corefile = replaceOnce(example, 'example.test:1053 {', `example.test:${port} {`);
      corefile = replaceOnce(corefile, 'bind 127.0.0.1 ::1', 'bind 127.0.0.1');
      corefile = replaceOnce(corefile, 'ready 127.0.0.1:8181', `ready 127.0.0.1:${readyPort}`);
      corefile = replaceOnce(corefile, 'socket /tmp/gslbd-coredns.sock', `socket ${String(up.compact)}`);
      const [ksk, zsk] = corednsKeys.map((k) => join(keyDir, k.base));
      return replaceOnce(corefile, 'examples/coredns/keys/Kexample.test.+013+KSKTAG examples/coredns/keys/Kexample.test.+013+ZSKTAG', `${ksk!} ${zsk!}`);
    }),
  ]);
  if (p.status === 'fulfilled') pdns = p.value;
  if (c.status === 'fulfilled') coredns = c.value;
  if (p.status === 'rejected') throw p.reason;
  if (c.status === 'rejected') throw c.reason;
  const engineAnchors = { 'example.test': exampleKeys[0]!.ds, 'ed.test': edKeys[0]!.ds };
  const pdnsServer = { address: pdns!.address, port: pdns!.port };
  const corednsServer = { address: coredns!.address, port: coredns!.port };
  const corednsAnchors = { 'example.test': corednsKeys[0]!.ds };
  const [standalone, powerdns, viaCoredns, wrong] = await Promise.all([
    doorResolvers(engine.server, engineAnchors),
    doorResolvers(pdnsServer, engineAnchors),
    doorResolvers(corednsServer, corednsAnchors),
    unboundFor(
      ['example.test', 'ed.test'].map((zone) => ({ zone, ...engine.server })),
      [stranger.ds, edKeys[0]!.ds],
    ),
  ]);
  wrongAnchor = wrong;
  doors = {
    standalone: { ...standalone, server: engine.server, anchors: engineAnchors, nxStatus: 'NOERROR' },
    powerdns: { ...powerdns, server: pdnsServer, anchors: engineAnchors, nxStatus: 'NXDOMAIN' },
    coredns: { ...viaCoredns, server: corednsServer, anchors: corednsAnchors, nxStatus: 'NOERROR' },
  };
});

// Peers before the engine they talk to; also after a failed `before`.
test.after.always(async () => {
  await Promise.all([...unbounds.map((u) => u.stop()), ...relays.map((r) => r.close())]);
  await Promise.all([pdns?.stop(), coredns?.stop()]);
  await stopAllEngines();
  rmSync(keyDir, { recursive: true, force: true });
});

const ecsCases: [subnet: string, address: string][] = [
  ['10.20.30.0/24', WWW.ap],
  ['10.99.0.0/24', WWW.eu],
  ['10.20.99.0/24', WWW.us],
];

/** One validated case: a question, and what the answer (without RRSIGs) must hold; `nx` = a nonexistent name. */
interface Case {
  readonly what: string;
  readonly name: string;
  readonly type: string;
  readonly check: (types: string[]) => boolean;
  readonly nx?: boolean;
  /** Doors that do not serve it (CoreDNS signs example.test only; CDS is gslbd's). */
  readonly not?: readonly DoorName[];
}

const cases: readonly Case[] = [
  { what: 'a nonexistent name', name: 'nothere.example.test', type: 'A', check: (types) => types.length === 0, nx: true },
  { what: 'a type the name lacks (NODATA)', name: 'www.example.test', type: 'AAAA', check: (types) => types.length === 0 },
  { what: 'an empty non-terminal', name: 'deep.example.test', type: 'A', check: (types) => types.length === 0 },
  { what: 'a CNAME chain', name: 'alias.example.test', type: 'A', check: (types) => types.includes('CNAME') && types.includes('A') },
  { what: 'a wildcard', name: 'host.wild.example.test', type: 'A', check: (types) => types.includes('A') },
  {
    what: 'a chain from an Ed25519 zone into the ECDSA zone',
    name: 'x.ed.test',
    type: 'A',
    check: (types) => types.includes('CNAME') && types.includes('A'),
    not: ['coredns'],
  },
  {
    what: 'a chain from the ECDSA zone into the Ed25519 zone',
    name: 'tochain.example.test',
    type: 'A',
    check: (types) => types.includes('CNAME') && types.includes('A'),
    not: ['coredns'],
  },
  { what: 'the DNSKEY RRset', name: 'example.test', type: 'DNSKEY', check: (types) => types.filter((x) => x === 'DNSKEY').length === 2 },
  {
    what: 'the CDS RRset of the KSK',
    name: 'example.test',
    type: 'CDS',
    check: (types) => types.filter((x) => x === 'CDS').length === 1,
    not: ['powerdns', 'coredns'],
  },
];

for (const name of ['standalone', 'powerdns', 'coredns'] as const) {
  test(`${name}: unbound validates the GSLB answer of every ECS subnet (AD), each its own address`, async (t) => {
    const door = doors[name];
    for (const [subnet, address] of ecsCases) {
      const r = await door.unbound.query('www.example.test', 'A', [`+subnet=${subnet}`]);
      t.is(r.status, 'NOERROR', `${subnet}: ${r.output}`);
      t.true(r.flags.includes('ad'), `${subnet}: ${r.output}`);
      t.deepEqual(
        r.answer.filter((a) => a.type === 'A').map((a) => a.data),
        [address],
        subnet,
      );
      t.true(
        r.answer.some((a) => a.type === 'RRSIG' && a.data.startsWith('A 13 3 ')),
        subnet,
      );
    }
  });

  for (const c of cases) {
    if (c.not?.includes(name)) continue;
    test(`${name}: unbound validates ${c.what} (AD); delv fully validates it`, async (t) => {
      const door = doors[name];
      const r = await door.unbound.query(c.name, c.type);
      t.is(r.status, c.nx ? door.nxStatus : 'NOERROR', r.output);
      t.true(r.flags.includes('ad'), r.output);
      t.true(c.check(r.answer.filter((a) => a.type !== 'RRSIG').map((a) => a.type)), r.output);
      const zone = c.name.endsWith('ed.test') ? 'ed.test' : 'example.test';
      const d = await delv(door.server, door.anchors[zone]!, c.name, c.type);
      t.true(d.validated, d.output);
    });
  }

  test(`${name}: an answer changed on its way (its signature broken) is SERVFAIL; the untouched ones still validate`, async (t) => {
    const door = doors[name];
    const broken = await door.relayed.query('www.example.test', 'A', ['+subnet=10.20.30.0/24']);
    t.is(broken.status, 'SERVFAIL', broken.output);
    t.false(broken.flags.includes('ad'));
    const intact = await door.relayed.query('www.example.test', 'A', ['+subnet=10.99.0.0/24']);
    t.is(intact.status, 'NOERROR', intact.output);
    t.true(intact.flags.includes('ad'), intact.output);
    t.deepEqual(
      intact.answer.filter((a) => a.type === 'A').map((a) => a.data),
      [WWW.eu],
    );
  });

  test(`${name}: delv rejects the answers with the trust anchor of another key`, async (t) => {
    const d = await delv(doors[name].server, stranger.ds, 'www.example.test', 'A');
    t.false(d.validated, d.output);
  });
}

test('standalone: a wrong trust anchor makes unbound answer SERVFAIL, for answers and denials alike', async (t) => {
  for (const [name, type] of [
    ['www.example.test', 'A'],
    ['nothere.example.test', 'A'],
    ['alias.example.test', 'A'],
  ] as const) {
    const r = await wrongAnchor.query(name, type, ['+subnet=10.20.30.0/24']);
    t.is(r.status, 'SERVFAIL', `${name}: ${r.output}`);
    t.false(r.flags.includes('ad'));
  }
  // The other zone, whose anchor is right, still validates through the same unbound.
  t.true((await wrongAnchor.query('www.ed.test', 'A')).flags.includes('ad'));
});

test('powerdns: pdnsutil show-zone lists the keys gslbd hands it; the KSK signs DNSKEY; denial is NSEC3 narrow (NXDOMAIN stays)', async (t) => {
  const shown = await new Promise<string>((resolve, reject) =>
    execFile('pdnsutil', ['--config-dir', pdns!.configDir, 'show-zone', 'example.test'], { timeout: 20000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`pdnsutil failed: ${err.message}\n${stdout}${stderr}`)) : resolve(`${stdout}${stderr}`),
    ),
  );
  t.regex(shown, /NSEC3 \(narrow\)|narrow/i, shown);
  for (const key of exampleKeys) t.true(shown.includes(`tag = ${key.keyTag}`), `key ${key.keyTag} listed:\n${shown}`);
  const r = await doors.powerdns.unbound.query('nothere.example.test', 'A');
  t.is(r.status, 'NXDOMAIN', r.output);
  t.true(r.flags.includes('ad'), r.output);
  t.true(
    r.authority.some((a) => a.type === 'NSEC3'),
    r.output,
  );
  const keys = await doors.powerdns.unbound.query('example.test', 'DNSKEY');
  const tags = keys.answer.filter((a) => a.type === 'RRSIG' && a.data.startsWith('DNSKEY ')).map((a) => Number(a.data.split(' ')[6]));
  t.deepEqual(tags, [exampleKeys[0]!.keyTag], 'the KSK signs the DNSKEY RRset');
});

test('standalone: a nonexistent name is a compact answer: NOERROR, an NSEC at the name to \\000.name with RRSIG NSEC NXNAME', async (t) => {
  const r = decodeReply((await udpQuery(engine.server, { name: 'nothere.example.test', type: 'A', edns: { dnssecOk: true } })).raw);
  t.is(r.rcode, 0);
  const nsec = r.packet.authorities!.find((a) => a.type === 'NSEC') as { name: string; data: { nextDomain: string; rrtypes: string[] } } | undefined;
  t.is(nsec?.name, 'nothere.example.test');
  t.is(nsec?.data.nextDomain, '\u0000.nothere.example.test', 'dns-packet decodes the \\000 label as the octet 0');
  t.deepEqual(nsec?.data.rrtypes, ['RRSIG', 'NSEC', 'UNKNOWN_128']);
  t.deepEqual(
    r.packet.authorities!.map((a) => a.type),
    ['SOA', 'RRSIG', 'NSEC', 'RRSIG'],
  );
  const nodata = await udpQuery(engine.server, { name: 'www.example.test', type: 'AAAA', edns: { dnssecOk: true } });
  const types = (nodata.packet.authorities!.find((a) => a.type === 'NSEC') as { data: { rrtypes: string[] } }).data.rrtypes;
  t.deepEqual(types, ['A', 'RRSIG', 'NSEC'], 'NODATA lists the configured types, not the one asked for');
});

test('standalone: without the DO bit nothing is signed; DNSKEY is answered anyway', async (t) => {
  const plain = await udpQuery(engine.server, { name: 'www.example.test', type: 'A', edns: { ecs: '10.20.30.0/24' } });
  t.deepEqual(plain.answers, [`www.example.test A ${WWW.ap}`]);
  const none = await udpQuery(engine.server, { name: 'nothere.example.test', type: 'A' });
  t.is(none.rcode, 3, 'NXDOMAIN stays NXDOMAIN without DO');
  t.deepEqual(
    none.authority.map((a) => a.split(' ')[1]),
    ['SOA'],
  );
  const keys = await udpQuery(engine.server, { name: 'example.test', type: 'DNSKEY' });
  t.deepEqual(
    keys.packet.answers!.map((a) => a.type),
    ['DNSKEY', 'DNSKEY'],
  );
});

test('standalone: a signed answer larger than the UDP size is truncated (TC) and complete over TCP', async (t) => {
  const unsigned = await udpQuery(engine.server, { name: 'big.example.test', type: 'A', edns: { udpPayloadSize: 512 } });
  t.false(unsigned.tc, 'fits 512 octets unsigned');
  t.is(unsigned.answers.length, BIG_COUNT);
  const signed = await udpQuery(engine.server, { name: 'big.example.test', type: 'A', edns: { udpPayloadSize: 512, dnssecOk: true } });
  t.true(signed.tc);
  t.is(signed.answers.length, 0);
  const { replies } = await tcpExchange(engine.server, frame(buildQuery({ name: 'big.example.test', type: 'A', edns: { dnssecOk: true } })), 1);
  const full = dnsPacket.decode(replies[0]!);
  t.is(full.answers!.filter((a) => a.type === 'A').length, BIG_COUNT);
  t.is(full.answers!.filter((a) => a.type === 'RRSIG').length, 1);
});

test('standalone: /explain?do=1 shows the answer as signed, and its signatures from the cache the second time', async (t) => {
  const url = `${engine.adminUrl!}/explain?name=www.example.test&type=A&client=10.99.7.0/24&do=1`;
  const first = (await (await fetch(url)).json()) as { answer: { answers: string[] }; afterAnswer: { signed: boolean; rrsets: { fromCache: boolean }[] }[] };
  t.true(
    first.answer.answers.some((a) => a.includes(' IN RRSIG A 13 3 ')),
    JSON.stringify(first.answer),
  );
  t.like(first.afterAnswer[0], { step: 'dnssec', signed: true });
  const second = (await (await fetch(url)).json()) as typeof first;
  t.true(second.afterAnswer[0]!.rrsets[0]!.fromCache);
  const plain = (await (await fetch(url.replace('&do=1', ''))).json()) as typeof first;
  t.false(
    plain.answer.answers.some((a) => a.includes(' RRSIG ')),
    'without do=1 the answer is unsigned',
  );
});
