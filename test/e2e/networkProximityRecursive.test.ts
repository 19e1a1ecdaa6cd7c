import test from 'ava';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { startGslbd, type RunningGslbd } from '../../src/process/gslbdProcess.js';
import { startCoredns, type CorednsProcess } from '../support/corednsProcess.js';
import { dig } from '../support/dig.js';
import { freePort } from '../support/freePort.js';
import { startPdns, type PdnsServer } from '../support/pdnsServer.js';

/**
 * Recursive delegation to a sub-tier end to end (docs/PRODUCT.md §5; seed 000 steps 4–8): the
 * client's resolver (`dig`) asks the top tier (PDNS-0); its best candidate for the client network
 * is the East Coast zone 0.1, delegated to a sub-tier's name server; the top tier asks that name
 * server itself, forwarding the client network as ECS, and answers with the sub-tier's record, AA
 * set. The sub-tier is a second gslbd (PDNS-0.1, choosing among its own data centers with the same
 * logic), or a small responder on loopback that answers, stays silent, truncates (TCP follows) or
 * records what it was sent. A loop (two engines delegating to each other) is refused by the
 * delegation hop option. The answers go through the standalone listener and, for the sub-tier
 * engine, through CoreDNS (compact protocol) and a real `pdns_server` on both of the remote
 * backend's transports (the Unix socket and the HTTP connector), which wait for the engine's
 * asynchronous lookup reply. A missing peer fails the test, also under `CI=true`.
 */

const TOKEN = 'zone-0-1-token-0123456789';
const ADMIN = 'admin-token-0123456789';

interface Engine {
  readonly running: RunningGslbd;
  readonly url: string;
  readonly server: { address: string; port: number };
}

async function engine(t: { teardown(f: () => Promise<void>): void }, text: string): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-recursive-'));
  const file = join(dir, 'gslbd.yaml');
  writeFileSync(file, text);
  const running = await startGslbd(file, { signals: false, watchFile: false, logDestination: openSync('/dev/null', 'w') });
  t.teardown(async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { running, url: `http://127.0.0.1:${running.admin!.port}`, server: running.dns.bound[0]! };
}

/**
 * The top tier: zone 0 (U.S.) with 0.1 (East Coast) delegated to `subTierPort` on loopback, 0.2
 * (West Coast, data center `west`) and 1 (Europe, `eu`) served here; the PDB keyed by the ECS
 * network; `www.work.test` resolved recursively. `defaultOrder` puts the delegated zone first for
 * networks not measured, `fallbackZone` second.
 */
function topTier(o: {
  subTierPort: number;
  dnsPort?: number;
  budgetMs?: number;
  attemptMs?: number;
  compact?: string;
  powerdns?: { path: string; httpPort: number };
  eu?: string;
}): string {
  return `listeners:
  dns: [{ address: 127.0.0.1, port: ${o.dnsPort ?? 0} }]
  admin: { address: 127.0.0.1, port: 0, token: ${ADMIN} }
${o.compact ? `  compact: { path: ${o.compact} }\n` : ''}${o.powerdns ? `  powerdns: { path: ${o.powerdns.path}, http: { address: 127.0.0.1, port: ${o.powerdns.httpPort} } }\n` : ''}logging: { level: silent }
agents:
  credentials:
    - { name: zone-0-1, zone: "0.1", token: ${TOKEN} }
networkProximity:
  zones:
    - { id: "0", name: U.S. }
    - { id: "0.1", name: East Coast, delegate: { nameServers: [{ name: ns1.z01.work.test, address: 127.0.0.1, port: ${o.subTierPort} }], check: { timeoutMs: 5000 } } }
    - { id: "0.2", name: West Coast }
    - { id: "1", name: Europe }
  defaultOrder: ["0.1", "1"]
  ecs: true
zones:
  - name: work.test
    soa: { mname: ns1.work.test, rname: hostmaster.work.test }
    ns: [ns1.work.test]
datacenters:
  - { name: west, proximityZone: "0.2" }
  - { name: eu, proximityZone: "1" }
services:
  - name: web
    endpoints:
      - { dc: west, address: 192.0.2.2 }
      - { dc: eu, address: ${o.eu ?? '192.0.2.3'} }
records:
  - name: www.work.test
    type: A
    ttl: 5
    service: web
    policy: { type: network-proximity, delegation: { mode: recursive${o.budgetMs ? `, budgetMs: ${o.budgetMs}` : ''}${o.attemptMs ? `, attemptMs: ${o.attemptMs}` : ''} } }
`;
}

/** The East Coast sub-tier (PDNS-0.1): its own data centers in zones 0.1.1 and 0.1.2, the PDB keyed by the ECS network the top tier forwards. */
const SUB_TIER = `listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${ADMIN} }
logging: { level: silent }
networkProximity:
  zones:
    - { id: "0.1.1", name: Boston }
    - { id: "0.1.2", name: Atlanta }
  defaultOrder: ["0.1.2"]
  ecs: true
zones:
  - name: work.test
    soa: { mname: ns1.z01.work.test, rname: hostmaster.work.test }
    ns: [ns1.z01.work.test]
datacenters:
  - { name: boston, proximityZone: "0.1.1" }
  - { name: atlanta, proximityZone: "0.1.2" }
services:
  - name: web
    endpoints:
      - { dc: boston, address: 192.0.2.11 }
      - { dc: atlanta, address: 192.0.2.12 }
records:
  - { name: www.work.test, type: A, ttl: 300, service: web, policy: { type: network-proximity } }
`;

/** Reports the East Coast agents' RTT toward `target` (ms). */
async function reportEast(url: string, target: string, rttMs: number): Promise<void> {
  const r = await fetch(`${url}/agent/v1/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ zone: '0.1', probes: [{ target, method: 'dns', sent: 3, received: 3, rttMinMs: rttMs, rttMedianMs: rttMs }] }),
  });
  if (r.status !== 200) throw new Error(`report: ${r.status} ${await r.text()}`);
}

async function metric(url: string, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(pattern.exec(text)?.[1] ?? 0);
}

type Behaviour = 'answer' | 'silent' | 'truncate';

/** The part of an `/explain` reply these tests read. */
interface Explained {
  answer: { answers: string[]; scope: number };
  delegations?: {
    record: string;
    result: string;
    ms: number;
    answered?: { zone: string; records: string[]; scope: number };
    instead?: { zone: string; dcs: string[] };
    attempts: { zone: string; nameServer: string; transport: string; rcode?: number; outcome: string; ms: number }[];
  }[];
}

/** What the responder received of one query for the GSLB name: its ECS option and its delegation hop option. */
interface Seen {
  readonly transport: 'udp' | 'tcp';
  readonly ecs: string | undefined;
  readonly hop: Buffer | undefined;
}

/**
 * A sub-tier name server on loopback (UDP and TCP on one port): it answers its keepalive (any other
 * name: NOERROR, no records) and, for `www.work.test`, per `behaviour()`: an authoritative
 * `A 192.0.2.99` with TTL 3600 and ECS scope 20, nothing, or a truncated UDP reply (the answer then
 * over TCP).
 */
async function responder(behaviour: () => Behaviour): Promise<{ port: number; seen: Seen[]; close(): void }> {
  const seen: Seen[] = [];
  const udp: Socket = createSocket('udp4');
  const reply = (msg: Buffer, transport: 'udp' | 'tcp'): Buffer | undefined => {
    const q = dnsPacket.decode(msg);
    const question = q.questions![0]!;
    const opt = (q.additionals ?? []).find((a) => a.type === 'OPT') as dnsPacket.OptAnswer | undefined;
    const ecsOption = opt?.options.find((o) => o.code === 8) as { ip: string; sourcePrefixLength: number } | undefined;
    if (question.name !== 'www.work.test')
      return dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: [question] });
    seen.push({
      transport,
      ecs: ecsOption && `${ecsOption.ip}/${ecsOption.sourcePrefixLength}`,
      hop: (opt?.options.find((o) => (o.code as number) === 65_430) as { data?: Buffer } | undefined)?.data,
    });
    const b = behaviour();
    if (b === 'silent') return undefined;
    if (b === 'truncate' && transport === 'udp')
      return dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.TRUNCATED_RESPONSE, questions: [question] });
    return dnsPacket.encode({
      type: 'response',
      id: q.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [question],
      answers: [{ type: 'A', name: 'www.work.test', ttl: 3600, data: '192.0.2.99' }],
      additionals: [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: 1232,
          options: ecsOption ? [{ code: 8, family: 1, sourcePrefixLength: ecsOption.sourcePrefixLength, scopePrefixLength: 20, ip: ecsOption.ip }] : [],
        } as dnsPacket.Answer,
      ],
    });
  };
  udp.on('message', (msg, from) => {
    const r = reply(msg, 'udp');
    if (r) udp.send(r, from.port, from.address);
  });
  udp.bind(0, '127.0.0.1');
  await once(udp, 'listening');
  const port = udp.address().port;
  const tcp: Server = createServer((c) => {
    let buf = Buffer.alloc(0);
    c.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 2 || buf.length < 2 + buf.readUInt16BE(0)) return;
      const r = reply(buf.subarray(2, 2 + buf.readUInt16BE(0)), 'tcp');
      if (r) c.end(Buffer.concat([Buffer.from([r.length >> 8, r.length & 0xff]), r]));
    });
    c.on('error', () => undefined);
  });
  tcp.listen(port, '127.0.0.1');
  await once(tcp, 'listening');
  return {
    port,
    seen,
    close() {
      udp.close();
      tcp.close();
    },
  };
}

test.serial(
  "seed 000 steps 4–8: the top tier resolves the East Coast sub-tier itself and answers the sub-tier's record, AA, through the listener and CoreDNS",
  async (t) => {
    const sub = await engine(t, SUB_TIER);
    // Its first answer (compiling the query path) is slow on a loaded machine: once before the top tier's keepalive asks.
    await dig(sub.server, ['www.work.test', 'A', '+subnet=192.0.2.0/24', '+time=6']);
    const dir = mkdtempSync(join(tmpdir(), 'gslbd-recursive-sock-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const compact = join(dir, 'compact.sock');
    // Budgets for a loaded shared machine: an engine's first GSLB answer took 0.5 s under load 25.
    const top = await engine(t, topTier({ subTierPort: sub.server.port, compact, budgetMs: 3000, attemptMs: 1500 }));
    let coredns: CorednsProcess | undefined;
    t.teardown(async () => {
      await coredns?.stop();
    });
    coredns = await startCoredns(
      (port, readyPort) =>
        `work.test:${port} {\n    bind 127.0.0.1\n    errors\n    ready 127.0.0.1:${readyPort}\n    gslb {\n        socket ${compact}\n        timeout 5s\n    }\n}\n`,
    );
    await reportEast(top.url, '198.51.100.0', 10);
    // The sub-tier decides by its own index: Atlanta (0.1.2) for a network it has not measured.
    const expected = ['NOERROR', true, ['A 192.0.2.12'], '198.51.100.0/24/24'];
    for (const [door, server] of [
      ['listener', top.server],
      ['coredns', { address: coredns.address, port: coredns.port }],
    ] as const) {
      const r = await dig(server, ['www.work.test', 'A', '+subnet=198.51.100.0/24', '+time=6']);
      t.deepEqual(
        [r.status, r.flags.includes('aa'), r.answer.map((a) => `${a.type} ${a.data}`), r.ecs && `${r.ecs.subnet}/${r.ecs.source}/${r.ecs.scope}`],
        expected,
        door,
      );
      // The sub-tier's TTL (300) capped by the record's (5).
      t.true(r.answer[0]!.ttl <= 5, `${door}: TTL ${r.answer[0]!.ttl}`);
    }
    const before = await metric(top.url, /gslbd_proximity_delegations_total\{result="answered"\} (\d+)/);
    t.true(before >= 1);
    const explain = (await (await fetch(`${top.url}/explain?name=www.work.test&type=A&client=198.51.100.1`)).json()) as Explained;
    t.regex(JSON.stringify(explain), /"mode":"recursive"/);
    // The sub-tier's keepalive state, in the trace and as a metric (1: its name server answered the last check).
    t.regex(JSON.stringify(explain), /"subTierKeepalive":\{"0\.1":"up"\}/);
    t.is(await metric(top.url, /gslbd_proximity_subtier_up\{zone="0\.1"\} (-?\d+)/), 1);
    // The network just asked: /explain reads the top tier's answer cache.
    t.is(explain.delegations?.[0]?.result, 'cached');
    t.deepEqual(
      explain.answer.answers.map((a) => a.replace(/ \d+ IN /, ' IN ')),
      ['www.work.test. IN A 192.0.2.12'],
    );
    // A network not asked yet: /explain asks the sub-tier, and shows its answer in place of the local one.
    for (let i = 0; i < 2; i++) {
      const fresh = (await (await fetch(`${top.url}/explain?name=www.work.test&type=A&client=198.51.99.0/24`)).json()) as Explained;
      t.deepEqual(
        fresh.answer.answers.map((a) => a.replace(/ \d+ IN /, ' IN ')),
        ['www.work.test. IN A 192.0.2.12'],
      );
      t.is(fresh.answer.scope, 24);
      const d = fresh.delegations![0]!;
      // A trial fills no cache: the second explanation asks the sub-tier again.
      t.like(d, { record: 'www.work.test', type: 'A', zones: ['0.1'], result: 'answered', answered: { zone: '0.1', scope: 24 } }, `explanation ${i + 1}`);
      t.regex(d.answered!.records[0]!, /^www\.work\.test\. [1-5] IN A 192\.0\.2\.12$/, "the sub-tier's TTL capped by the record's");
      t.like(d.attempts[0], { zone: '0.1', nameServer: `ns1.z01.work.test (127.0.0.1:${sub.server.port})`, transport: 'udp', rcode: 0, outcome: 'answered' });
      t.true(d.ms > 0 && d.ms < 3000, `latency ${d.ms} ms`);
    }
    // Trials are not counted in the query path's delegation metrics.
    t.is(await metric(top.url, /gslbd_proximity_delegations_total\{result="answered"\} (\d+)/), before);
  },
);

test.serial(
  'ECS is forwarded at most /24 with the hop option, the TTL and scope are capped, TCP follows a truncated reply, and answers are cached per client network',
  async (t) => {
    let behaviour: Behaviour = 'answer';
    const ns = await responder(() => behaviour);
    t.teardown(() => ns.close());
    const top = await engine(t, topTier({ subTierPort: ns.port, budgetMs: 3000, attemptMs: 1500 }));
    const r = await dig(top.server, ['www.work.test', 'A', '+subnet=198.51.100.77/32', '+time=6']);
    t.deepEqual(
      [r.status, r.flags.includes('aa'), r.answer.map((a) => `${a.type} ${a.data} ${a.ttl}`), r.ecs && `${r.ecs.subnet}/${r.ecs.source}/${r.ecs.scope}`],
      // Scope: the longer of the top tier's /24 (its PDB network) and the sub-tier's 20.
      ['NOERROR', true, ['A 192.0.2.99 5'], '198.51.100.77/32/24'],
    );
    t.is(ns.seen.length, 1);
    t.is(ns.seen[0]!.ecs, '198.51.100.0/24', 'the client network, never wider than /24');
    t.is(ns.seen[0]!.hop?.length, 9, 'the delegation hop option: one hop octet and the engine id');
    t.is(ns.seen[0]!.hop?.[0], 1);
    // The same client network again: from the cache, the sub-tier is not asked.
    const again = await dig(top.server, ['www.work.test', 'A', '+subnet=198.51.100.5/32', '+time=6']);
    t.deepEqual(
      again.answer.map((a) => a.data),
      ['192.0.2.99'],
    );
    t.is(ns.seen.length, 1);
    // Another network, a truncated UDP reply: the engine asks again over TCP.
    behaviour = 'truncate';
    const tcp = await dig(top.server, ['www.work.test', 'A', '+subnet=203.0.113.0/24', '+time=6']);
    t.deepEqual(
      tcp.answer.map((a) => a.data),
      ['192.0.2.99'],
    );
    t.deepEqual(
      ns.seen.slice(1).map((s) => s.transport),
      ['udp', 'tcp'],
    );
  },
);

test.serial('a silent sub-tier: the next zone answers once the budget is spent, and the query path never waits for it', async (t) => {
  const ns = await responder(() => 'silent');
  t.teardown(() => ns.close());
  const top = await engine(t, topTier({ subTierPort: ns.port, budgetMs: 1000, attemptMs: 400 }));
  // Over one socket: the delegated query first, then a static one; the static answer comes first.
  const socket = createSocket('udp4');
  t.teardown(() => socket.close());
  const order: string[] = [];
  const replies = new Promise<void>((resolve) => {
    socket.on('message', (msg) => {
      const m = dnsPacket.decode(msg);
      order.push(`${m.questions![0]!.name} ${(m.answers ?? []).map((a) => ('data' in a && typeof a.data === 'string' ? a.data : '')).join()}`);
      if (order.length === 2) resolve();
    });
  });
  const send = (id: number, name: string, type: dnsPacket.RecordType, ecs: boolean): void => {
    const additionals = ecs
      ? [
          {
            type: 'OPT',
            name: '.',
            udpPayloadSize: 1232,
            options: [{ code: 8, family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: '198.51.100.0' }],
          } as dnsPacket.Answer,
        ]
      : [];
    socket.send(dnsPacket.encode({ type: 'query', id, flags: 0, questions: [{ type, name }], additionals }), top.server.port, top.server.address);
  };
  send(1, 'www.work.test', 'A', true);
  send(2, 'work.test', 'NS', false);
  await replies;
  // The fallback order's next zone, Europe, once the name server was asked twice and the budget ran out.
  t.deepEqual(order, ['work.test ns1.work.test', 'www.work.test 192.0.2.3']);
  t.true(ns.seen.length >= 2, `the silent name server was asked again within the budget (${ns.seen.length} attempts)`);
  t.is(await metric(top.url, /gslbd_proximity_delegations_total\{result="failed"\} (\d+)/), 1);
  // /explain asks the silent sub-tier too: the failure, each attempt, and the zone that answered instead.
  const explain = (await (await fetch(`${top.url}/explain?name=www.work.test&type=A&client=198.51.100.0/24`)).json()) as Explained;
  t.deepEqual(explain.answer.answers, ['www.work.test. 5 IN A 192.0.2.3']);
  const d = explain.delegations![0]!;
  t.like(d, { zones: ['0.1'], result: 'failed', instead: { zone: '1', dcs: ['eu'] } });
  t.is(d.answered, undefined);
  t.true(d.attempts.length >= 2 && d.attempts.every((a) => a.outcome === 'no reply' && a.rcode === undefined));
  t.true(d.ms >= 2 * 400 - 50 && d.ms <= 5000, `two attempts of attemptMs, within the budget (${d.ms} ms)`);
  t.is(await metric(top.url, /gslbd_proximity_delegations_total\{result="failed"\} (\d+)/), 1, 'a trial is not counted');
});

test.serial('a loop (two engines delegating to each other) is refused by the delegation hop option', async (t) => {
  const [portA, portB] = [await freePort('127.0.0.1'), await freePort('127.0.0.1')];
  const a = await engine(t, topTier({ subTierPort: portB, dnsPort: portA, eu: '192.0.2.3', budgetMs: 3000, attemptMs: 1500 }));
  const b = await engine(t, topTier({ subTierPort: portA, dnsPort: portB, eu: '192.0.2.33', budgetMs: 3000, attemptMs: 1500 }));
  // A asks B (origin A, hop 1); B asks A (origin A, hop 2); A refuses its own id; B answers its next zone.
  const r = await dig(a.server, ['www.work.test', 'A', '+subnet=198.51.100.0/24', '+time=6']);
  t.deepEqual([r.status, r.flags.includes('aa'), r.answer.map((x) => `${x.type} ${x.data}`)], ['NOERROR', true, ['A 192.0.2.33']]);
  t.is(await metric(a.url, /gslbd_proximity_delegations_total\{result="refused"\} (\d+)/), 1);
  t.is(await metric(b.url, /gslbd_proximity_delegations_total\{result="failed"\} (\d+)/), 1);
  t.is(await metric(a.url, /gslbd_proximity_delegations_total\{result="answered"\} (\d+)/), 1);
});

test.serial('the same delegated answer, AA and ECS scope through the standalone listener, PowerDNS (Unix socket and HTTP connector) and CoreDNS', async (t) => {
  t.timeout(120_000);
  const sub = await engine(t, SUB_TIER);
  await dig(sub.server, ['www.work.test', 'A', '+subnet=192.0.2.0/24', '+time=6']);
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-recursive-sock-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const compact = join(dir, 'compact.sock');
  const socketPath = join(dir, 'pdns.sock');
  const httpPort = await freePort('127.0.0.1');
  // Budgets for a loaded shared machine, below PowerDNS's connector timeout (5 s here).
  const top = await engine(t, topTier({ subTierPort: sub.server.port, compact, powerdns: { path: socketPath, httpPort }, budgetMs: 3000, attemptMs: 1500 }));
  const peers: { stop(): Promise<void> }[] = [];
  t.teardown(async () => {
    await Promise.all(peers.map((p) => p.stop()));
  });
  const started = await Promise.allSettled([
    startPdns({ socketPath, settings: { 'remote-connection-string': `unix:path=${socketPath},timeout=5000` } }),
    startPdns({ socketPath, settings: { 'remote-connection-string': `http:url=http://127.0.0.1:${httpPort}/dns,post=1,post_json=1,timeout=5000` } }),
    startCoredns(
      (port, readyPort) =>
        `work.test:${port} {\n    bind 127.0.0.1\n    errors\n    ready 127.0.0.1:${readyPort}\n    gslb {\n        socket ${compact}\n        timeout 5s\n    }\n}\n`,
    ),
  ]);
  for (const s of started) if (s.status === 'fulfilled') peers.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
  const [unix, http, coredns] = peers as [PdnsServer, PdnsServer, CorednsProcess];
  const doors: readonly (readonly [string, { address: string; port: number }])[] = [
    ['pdns-unix', { address: unix.address, port: unix.port }],
    ['pdns-http', { address: http.address, port: http.port }],
    ['listener', top.server],
    ['coredns', { address: coredns.address, port: coredns.port }],
  ];
  // One client network per door; each door is the first to ask for one of them, so every door
  // waits for the sub-tier itself at least once (the top tier caches a sub-tier's answer per network).
  const subnets = doors.map((_, i) => `198.51.${100 + i}.0/24`);
  const table: Record<string, unknown[][]> = {};
  for (let round = 0; round < doors.length; round++) {
    for (let d = 0; d < doors.length; d++) {
      const [door, server] = doors[d]!;
      const subnet = subnets[(d + round) % doors.length]!;
      const r = await dig(server, ['www.work.test', 'A', `+subnet=${subnet}`, '+time=8', '+tries=1']);
      (table[door] ??= []).push([
        subnet,
        r.status,
        r.flags.includes('aa'),
        r.answer.map((a) => `${a.type} ${a.data}`),
        r.ecs && `${r.ecs.subnet}/${r.ecs.source}/${r.ecs.scope}`,
        r.answer.every((a) => a.ttl <= 5),
      ]);
    }
  }
  // The sub-tier decides by its own index (Atlanta, 0.1.2, for networks it has not measured);
  // the scope is the top tier's /24 and the sub-tier's /24; the sub-tier's TTL (300) capped by the record's (5).
  const expected = subnets.map((subnet) => [subnet, 'NOERROR', true, ['A 192.0.2.12'], `${subnet.split('/')[0]}/24/24`, true]);
  for (const [door] of doors) {
    t.deepEqual(
      [...table[door]!].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      expected,
      door,
    );
  }
  // Every query delegated once (PowerDNS's second lookup of a query reuses the first's reply):
  // each network went to the sub-tier at least once, the rest came from the top tier's cache
  // (an answer is kept for its capped TTL, 5 s, so a slow run asks again).
  const answered = await metric(top.url, /gslbd_proximity_delegations_total\{result="answered"\} (\d+)/);
  const cached = await metric(top.url, /gslbd_proximity_delegations_total\{result="cached"\} (\d+)/);
  t.true(answered >= doors.length, `answered ${answered}`);
  t.is(answered + cached, doors.length * doors.length);
  t.is(await metric(top.url, /gslbd_proximity_delegations_total\{result="failed"\} (\d+)/), 0);
});
