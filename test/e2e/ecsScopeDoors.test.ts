import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { dig, type DigServer } from '../support/dig.js';
import { REPO_ROOT, startEngine, stopAllEngines, type EngineProcess } from '../support/engineProcess.js';
import { freePort } from '../support/freePort.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';
import { waitFor } from '../support/waitFor.js';

/**
 * The exact ECS scope (issue 14) through every front door, with real peers: one real engine
 * process (`gslbd serve`) behind its standalone DNS listener, a real `pdns_server` (remote
 * backend) and the real `coredns-gslb` binary (compact protocol), each queried with the real
 * `dig +subnet=`.
 *
 * Why exact: a resolver caches an answer for the whole block the scope names and hands it to
 * every client in that block (RFC 7871 §7.3). A scope wider than the block of clients that get
 * the same answer sends some of them the wrong data center; scope 0 sends everyone this answer.
 * Two defects did that, on every door alike (each query row of order A but the last, and of
 * order B but the first and the last, came back with scope 0 before the fix):
 * - the per-record decision cache keyed IPv4 and IPv6 clients alike, so once an IPv6 client had
 *   been answered, IPv4 clients outside the subnet got scope 0 (order A; the same IPv4 query on a
 *   cold record gets /24, the first row of order B);
 * - IPv6 scopes could cover `::ffff:0:0/96`, whose clients are answered as IPv4 (a mapped
 *   10.20.30.x goes to ap-northeast, its IPv6 neighbours do not): an IPv6 client tested against
 *   the IPv4 subnet got scope 0, the whole address space (order B).
 * Each record keeps its own decision cache, so each door has its own pair of records (`a-DOOR`
 * for order A, `b-DOOR` for order B) and every door starts cold: the order of the queries is part
 * of what is tested.
 *
 * The records read nothing but the client subnet (no location data is configured), so every
 * scope below follows from 10.20.30.0/24 alone:
 * - inside it: /24; outside it, IPv4: one bit more than the client shares with 10.20.30.0
 *   (10.20.31.0 → 24, 10.0.0.0 → 12, 11.0.0.0 → 8);
 * - IPv6: the largest block that stays clear of the IPv6 ranges carrying IPv4 addresses
 *   (`src/core/net/ipv4InIpv6.ts`: 2001:db8:: and 2001:db9:: share 20 bits with Teredo 2001::/32 →
 *   21; `::1`, `::` and `::5` lie inside `::/96` → 96); a mapped client gets 96 + its IPv4 scope.
 *
 * PowerDNS 4.7 and the CoreDNS plugin carry every input of the tables below (IPv6 /128 and /64,
 * `::/64`, IPv4-mapped) to the engine and echo its scope unchanged, so all three doors are held to
 * the same table. A missing peer (dig, pdns_server, the CoreDNS binary) fails the test, also under
 * `CI=true`; nothing here is skipped (test/support/README.md).
 */

const US_EAST = '192.0.2.10';
const EU_WEST = '198.51.100.10';
const AP_NORTHEAST = '203.0.113.10';

const DOORS = ['listener', 'pdns', 'coredns'] as const;
type Door = (typeof DOORS)[number];

/** One query of an order: ECS source (`dig +subnet=`) → the A record's address → ECS scope. */
type Step = readonly [subnet: string, address: string, scope: number];

/** Order A: an IPv6 client first, then IPv4 clients (defect 1: they got scope 0). */
const ORDER_A: readonly Step[] = [
  ['2001:db8::/48', US_EAST, 21],
  ['10.20.31.0/24', US_EAST, 24],
  ['10.0.0.0/8', US_EAST, 12],
  ['11.0.0.0/24', US_EAST, 8],
  ['10.20.30.0/24', AP_NORTHEAST, 24],
];

/**
 * Order B: an IPv4 client first, then IPv6 clients on the record it warmed (the IPv4 decision's
 * scope must not carry over), and defect 2: `::1`, `::` and `::5` are neighbours of
 * `::ffff:0:0/96`, and a scope shorter than 96 would hand their answer to the mapped
 * 10.20.30.0/120, which goes elsewhere (before the fix: scope 0).
 */
const ORDER_B: readonly Step[] = [
  ['10.20.31.0/24', US_EAST, 24],
  ['2001:db9::/48', US_EAST, 21],
  ['::1/128', US_EAST, 96],
  ['::/64', US_EAST, 96],
  ['::5/128', US_EAST, 96],
  ['::ffff:10.20.30.0/120', AP_NORTHEAST, 120],
];

const POLICY = '{ type: static, rules: [ { when: { clientSubnet: [10.20.30.0/24] }, dcs: [ap-northeast] }, { dcs: [us-east] } ] }';

/**
 * A name split between an address and a CNAME (issue 17, item 11): `split-DOOR` answers the GSLB
 * A (us-east, a policy that reads nothing of the client) to 10.20.30.0/24 and a static CNAME to
 * `target.example.test` (192.0.2.99) to everyone else, so each scope below is the boundary
 * between the two sides alone — the same numbers as the tables above, on both sides of it.
 */
const SPLIT: readonly (readonly [subnet: string, side: 'A' | 'CNAME', scope: number])[] = [
  ['10.20.30.0/24', 'A', 24],
  ['10.20.31.0/24', 'CNAME', 24],
  ['10.0.0.0/8', 'CNAME', 12],
  ['11.0.0.0/24', 'CNAME', 8],
  ['2001:db8::/48', 'CNAME', 21],
  ['::ffff:10.20.30.0/120', 'A', 120],
  ['::ffff:10.20.31.0/120', 'CNAME', 120],
];
const TARGET = '192.0.2.99';

/** The engine's configuration: three listeners on port 0 / relative socket paths, no location data. */
function engineConfig(): string {
  const records = DOORS.flatMap((door) =>
    ['a', 'b'].map((order) => `  - { name: ${order}-${door}.example.test, type: A, ttl: 30, service: web, policy: ${POLICY} }`),
  );
  const splits = DOORS.map(
    (door) =>
      `  - { name: split-${door}.example.test, type: A, ttl: 30, service: web, policy: { type: static, rules: [ { dcs: [us-east] } ] }, clients: [10.20.30.0/24] }`,
  );
  const cnames = DOORS.map((door) => `      - { name: split-${door}, type: CNAME, ttl: 30, data: target.example.test }`);
  return `listeners:
  dns:
    - { address: 127.0.0.1, port: 0 }
  powerdns: { path: pdns.sock }
  compact: { path: compact.sock }
logging: { level: info }
geo: { sources: [] }
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: target, type: A, ttl: 30, data: ${TARGET} }
${cnames.join('\n')}
datacenters:
  - { name: us-east, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: eu-west, location: Europe.IE, lat: 53.3, lon: -6.3 }
  - { name: ap-northeast, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: ${US_EAST} }
      - { dc: eu-west, address: ${EU_WEST} }
      - { dc: ap-northeast, address: ${AP_NORTHEAST} }
records:
${records.join('\n')}
${splits.join('\n')}
`;
}

const COREDNS = join(REPO_ROOT, 'coredns-bridge/bin/coredns-gslb');

/** A running coredns-gslb. */
interface Coredns {
  readonly port: number;
  readonly child: ChildProcess;
  readonly dir: string;
  output(): string;
}

const corednsChildren = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of corednsChildren) child.kill('SIGKILL');
});

/**
 * Starts coredns-gslb for `example.test` on a free loopback port, with the gslb plugin on the
 * engine's compact socket, and resolves once its `ready` endpoint says the engine is connected.
 * Retries with new ports when one was taken in between (freePort.ts).
 * @throws Error when the binary is missing (test/setup.sh builds it), or it exits or is not ready within 15 s.
 */
async function startCoredns(socket: string): Promise<Coredns> {
  if (!existsSync(COREDNS)) throw new Error(`${COREDNS} is missing: run \`bash test/setup.sh\` (it builds the binary)`);
  for (let attempt = 0; ; attempt++) {
    const [port, readyPort] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'gslbd-ecs-coredns-'));
    const corefile = join(dir, 'Corefile');
    writeFileSync(
      corefile,
      `example.test:${port} {\n    bind 127.0.0.1\n    errors\n    ready 127.0.0.1:${readyPort}\n    gslb {\n        socket ${socket}\n        timeout 1s\n    }\n}\n`,
    );
    const child = spawn(COREDNS, ['-conf', corefile], { stdio: ['ignore', 'pipe', 'pipe'] });
    corednsChildren.add(child);
    child.once('exit', () => corednsChildren.delete(child));
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const coredns: Coredns = { port, child, dir, output: () => out };
    try {
      await waitFor(
        'coredns-gslb ready (engine connected)',
        async () => {
          if (child.exitCode !== null) throw new Error(`coredns-gslb exited with ${child.exitCode}:\n${out}`);
          return (
            (await fetch(`http://127.0.0.1:${readyPort}/ready`).then(
              (r) => r.status,
              () => 0,
            )) === 200
          );
        },
        15000,
        { everyMs: 50, detail: () => out },
      );
      return coredns;
    } catch (e) {
      await stopCoredns(coredns);
      if (attempt >= 2 || !/address already in use/.test(out)) throw e;
    }
  }
}

/** SIGTERM, then SIGKILL after 5 s; removes its directory. */
async function stopCoredns(c: Coredns): Promise<void> {
  if (c.child.exitCode === null && c.child.signalCode === null) {
    const exited = new Promise((r) => c.child.once('exit', r));
    c.child.kill('SIGTERM');
    const killer = setTimeout(() => c.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  }
  rmSync(c.dir, { recursive: true, force: true });
}

let engine: EngineProcess | undefined;
let pdns: PdnsServer | undefined;
let coredns: Coredns | undefined;
let servers: Record<Door, DigServer>;

test.before(async () => {
  engine = await startEngine(engineConfig());
  // The socket paths the engine bound, from its `gslbd up` line.
  const up = engine.logs().find((l) => l.msg === 'gslbd up')!;
  const [p, c] = await Promise.allSettled([startPdns({ socketPath: String(up.powerdns), instance: 'ecs-scope' }), startCoredns(String(up.compact))]);
  if (p.status === 'fulfilled') pdns = p.value;
  if (c.status === 'fulfilled') coredns = c.value;
  if (p.status === 'rejected') throw p.reason;
  if (c.status === 'rejected') throw c.reason;
  servers = { listener: engine.server, pdns: { address: pdns!.address, port: pdns!.port }, coredns: { address: '127.0.0.1', port: coredns!.port } };
});

// Also after a failed `before`: whatever started is stopped, peers before the engine they talk to.
test.after.always(async () => {
  await Promise.all([coredns && stopCoredns(coredns), pdns?.stop()]);
  await stopAllEngines();
});

/**
 * Runs `steps` in order against `name` through `door` and compares the whole table at once, so a
 * failure shows every query that went wrong, not only the first: per query the ECS source, the
 * status, the answer records and dig's `CLIENT-SUBNET` line as `addr/source/scope`.
 */
async function checkOrder(t: import('ava').ExecutionContext, door: Door, name: string, steps: readonly Step[]): Promise<void> {
  const actual: unknown[] = [];
  const expected: unknown[] = [];
  for (const [subnet, address, scope] of steps) {
    const r = await dig(servers[door], [name, 'A', `+subnet=${subnet}`]);
    actual.push([subnet, r.status, r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`), r.ecs && `${r.ecs.subnet}/${r.ecs.source}/${r.ecs.scope}`]);
    const [source, length] = subnet.split('/');
    expected.push([subnet, 'NOERROR', [`${name}. 30 A ${address}`], `${source}/${length}/${scope}`]);
  }
  t.deepEqual(actual, expected, `${door}: ${name}, queries in this order`);
}

for (const door of DOORS) {
  test(`${door}: a name split between an A and a CNAME by clients — one side per client, the scope of the boundary`, async (t) => {
    const name = `split-${door}.example.test`;
    const actual: unknown[] = [];
    const expected: unknown[] = [];
    for (const [subnet, side, scope] of SPLIT) {
      const r = await dig(servers[door], [name, 'A', `+subnet=${subnet}`]);
      actual.push([subnet, r.status, r.answer.map((a) => `${a.name} ${a.ttl} ${a.type} ${a.data}`), r.ecs && `${r.ecs.subnet}/${r.ecs.source}/${r.ecs.scope}`]);
      const [source, length] = subnet.split('/');
      const answer = side === 'A' ? [`${name}. 30 A ${US_EAST}`] : [`${name}. 30 CNAME target.example.test.`, `target.example.test. 30 A ${TARGET}`];
      expected.push([subnet, 'NOERROR', answer, `${source}/${length}/${scope}`]);
    }
    t.deepEqual(actual, expected, `${door}: ${name}`);
  });
  test(`${door}: IPv6 first, then IPv4 — IPv4 scopes stay exact (order A)`, (t) => checkOrder(t, door, `a-${door}.example.test`, ORDER_A));
  test(`${door}: IPv4 first, then IPv6 — IPv6 scopes stay exact and clear of ::ffff:0:0/96 (order B)`, (t) =>
    checkOrder(t, door, `b-${door}.example.test`, ORDER_B));
}
