import test from 'ava';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { startCoredns, type CorednsProcess } from '../support/corednsProcess.js';
import { dig, type DigServer } from '../support/dig.js';
import { startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';

/**
 * Network proximity through every front door, with real peers (issue 20: "dig through the
 * standalone listener, PowerDNS and CoreDNS give the same answers and scopes"): one real engine
 * process (`gslbd serve`) behind its standalone DNS listener, a real `pdns_server` (remote
 * backend) and the real `coredns-gslb` binary (compact protocol), each queried with the real
 * `dig +subnet=`, as in ecsScopeDoors.test.ts.
 *
 * The PDB is keyed by the ECS network (`ecs: true`): behind PowerDNS and CoreDNS the engine sees
 * the peer, not dig, so only the ECS network is the same client on every door. Zone agents report
 * RTTs over the real agent API before the queries: 198.51.100.0/24 is nearest the East Coast (0.1),
 * 203.0.113.0/24 nearest Europe (1), 100.64.1.0/24 nearest the West Coast (0.2), which is
 * delegated to a sub-tier: `alias` answers a CNAME into `www.z02.work.test`; 100.64.9.0/24 is not
 * measured (the fallback order, `defaultOrder: ["1"]`). Every answer's scope is the PDB network's
 * /24 (docs/PRODUCT.md §8). A missing peer fails the test, also under `CI=true`.
 */

const ADMIN = 'admin-token-0123456789';
const TOKENS = { '0.1': 'zone-0-1-token-0123456789', '0.2': 'zone-0-2-token-0123456789', '1': 'zone-1-token-0123456789' } as const;
type Zone = keyof typeof TOKENS;
const EAST = '192.0.2.1';
const EU = '192.0.2.3';

const DOORS = ['listener', 'pdns', 'coredns'] as const;
type Door = (typeof DOORS)[number];

/** The configuration, with the West Coast sub-tier's keepalive sent to `subTierPort` on loopback. */
const config = (subTierPort: number): string => `listeners:
  dns:
    - { address: 127.0.0.1, port: 0 }
  powerdns: { path: pdns.sock }
  compact: { path: compact.sock }
  admin: { address: 127.0.0.1, port: 0, token: ${ADMIN} }
logging: { level: info }
geo: { sources: [] }
agents:
  credentials:
${(Object.keys(TOKENS) as Zone[]).map((z) => `    - { name: zone-${z.replace('.', '-')}, zone: "${z}", token: ${TOKENS[z]} }`).join('\n')}
networkProximity:
  zones:
    - { id: "0", name: U.S. }
    - { id: "0.1", name: East Coast }
    - { id: "0.2", name: West Coast, delegate: { nameServers: [{ name: ns1.z02.work.test, address: 127.0.0.1, port: ${subTierPort} }] } }
    - { id: "1", name: Europe }
  defaultOrder: ["1"]
  ecs: true
  samples: 1
zones:
  - name: work.test
    ttl: 300
    soa: { mname: ns1.work.test, rname: hostmaster.work.test, minimum: 60 }
    ns: [ns1.work.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      # The alias name is delegated to the West Coast sub-tier by static NS records (README.md, "Delegation").
      - { name: z02, type: NS, data: ns1.z02.work.test. }
      - { name: ns1.z02, type: A, data: 192.0.2.54 }
datacenters:
  - { name: east, proximityZone: "0.1" }
  - { name: eu, proximityZone: "1" }
services:
  - name: web
    endpoints:
      - { dc: east, address: ${EAST} }
      - { dc: eu, address: ${EU} }
records:
  - name: www.work.test
    type: A
    ttl: 30
    service: web
    policy: { type: network-proximity, delegation: { mode: alias, aliases: { "0.2": www.z02.work.test } } }
`;

/** ECS source → the answer every door must give (the record set, as `TYPE data`) and its scope. */
const EXPECTED: readonly (readonly [subnet: string, answer: string, scope: number])[] = [
  ['198.51.100.0/24', `A ${EAST}`, 24],
  ['203.0.113.0/24', `A ${EU}`, 24],
  ['100.64.1.0/24', 'CNAME www.z02.work.test.', 24],
  ['100.64.9.0/24', `A ${EU}`, 24],
  ['198.51.100.77/32', `A ${EAST}`, 24],
];

let engine: EngineProcess | undefined;
let subTier: Socket | undefined;
let pdns: PdnsServer | undefined;
let coredns: CorednsProcess | undefined;
let servers: Record<Door, DigServer>;

/** Reports one probe result per zone (`rtt`: zone → median RTT in ms) toward `target`, each as its zone's agent. */
async function report(url: string, target: string, rtt: Readonly<Record<Zone, number>>): Promise<void> {
  for (const z of Object.keys(TOKENS) as Zone[]) {
    const r = await fetch(`${url}/agent/v1/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS[z]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ zone: z, probes: [{ target, method: 'dns', sent: 3, received: 3, rttMinMs: rtt[z], rttMedianMs: rtt[z] }] }),
    });
    if (r.status !== 200) throw new Error(`report for zone ${z}: ${r.status} ${await r.text()}`);
  }
}

/**
 * The West Coast sub-tier's name server as its keepalive sees it: every query gets a reply (QR set,
 * NOERROR), so the zone stays up and the alias answers, however late the doors are queried.
 */
async function startSubTier(): Promise<Socket> {
  const socket = createSocket('udp4');
  socket.on('message', (msg, from) => {
    if (msg.length < 12) return;
    const reply = Buffer.from(msg);
    reply[2] = (reply[2] ?? 0) | 0x80;
    socket.send(reply, from.port, from.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return socket;
}

test.before(async () => {
  subTier = await startSubTier();
  engine = await startEngine(config(subTier.address().port));
  const up = engine.logs().find((l) => l.msg === 'gslbd up')!;
  const [p, c] = await Promise.allSettled([
    startPdns({ socketPath: String(up.powerdns), instance: 'proximity-doors' }),
    startCoredns(
      (port, readyPort) =>
        `work.test:${port} {\n    bind 127.0.0.1\n    errors\n    ready 127.0.0.1:${readyPort}\n    gslb {\n        socket ${String(up.compact)}\n        timeout 1s\n    }\n}\n`,
    ),
  ]);
  if (p.status === 'fulfilled') pdns = p.value;
  if (c.status === 'fulfilled') coredns = c.value;
  if (p.status === 'rejected') throw p.reason;
  if (c.status === 'rejected') throw c.reason;
  servers = { listener: engine.server, pdns: { address: pdns!.address, port: pdns!.port }, coredns: { address: coredns!.address, port: coredns!.port } };
  await report(engine.adminUrl!, '198.51.100.0', { '0.1': 10, '0.2': 60, '1': 90 });
  await report(engine.adminUrl!, '203.0.113.0', { '0.1': 80, '0.2': 90, '1': 12 });
  await report(engine.adminUrl!, '100.64.1.0', { '0.1': 70, '0.2': 8, '1': 95 });
});

test.after.always(async () => {
  await Promise.all([coredns?.stop(), pdns?.stop()]);
  await stopAllEngines();
  subTier?.close();
});

test.serial('the same proximity answers and ECS scopes through the standalone listener, PowerDNS and CoreDNS', async (t) => {
  const table: Record<Door, unknown[]> = { listener: [], pdns: [], coredns: [] };
  for (const door of DOORS) {
    for (const [subnet] of EXPECTED) {
      const r = await dig(servers[door], ['www.work.test', 'A', `+subnet=${subnet}`]);
      table[door].push([
        subnet,
        r.status,
        r.flags.includes('aa'),
        r.answer.filter((a) => a.name === 'www.work.test.').map((a) => `${a.type} ${a.data}`),
        r.ecs && `${r.ecs.subnet}/${r.ecs.source}/${r.ecs.scope}`,
      ]);
    }
  }
  const expected = EXPECTED.map(([subnet, answer, scope]) => {
    const [source, length] = subnet.split('/');
    return [subnet, 'NOERROR', true, [answer], `${source}/${length}/${scope}`];
  });
  t.deepEqual(table.listener, expected, 'the standalone listener');
  t.deepEqual(table.pdns, expected, 'PowerDNS');
  t.deepEqual(table.coredns, expected, 'CoreDNS');
});
