import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { loadFastPathAddon } from '../../src/doors/dns/fastPathAddon.js';
import { DnsServer } from '../../src/doors/dns/dnsServer.js';
import { dnsBehaviourSchema } from '../../src/doors/dns/listenerSchema.js';
import { MessageHandler, type ReplyReuse } from '../../src/doors/dns/handleMessage.js';
import { parseIp } from '../../src/core/net/ipAddress.js';
import { EngineMetrics } from '../../src/core/telemetry/engineMetrics.js';
import { Engine } from '../../src/pipeline/engine.js';
import { withHealthView } from '../../src/pipeline/snapshot.js';
import { parseConfigText } from '../../src/process/loadConfig.js';
import { buildQuery } from './dnsClient.js';
import { freePort } from './freePort.js';
import { dcsDown } from './selectionFixture.js';
import { exchangeAll } from './udpExchangeAll.js';
import { THREE_DATA_CENTERS_YAML, threeDataCentersEngine } from './threeDataCenters.js';

/**
 * Exercises native/fast_path.cc (the build `GSLBD_FASTPATH_ADDON` names; under the sanitizers in
 * src/doors/dns/fastPathSanitizer.test.ts) against the Node listener on one configuration, over
 * IPv4 and IPv6, with two threads: ECS clients of both families (IPv4-mapped included), queries
 * without ECS or without EDNS, DO set, letter-case variants, malformed and truncated messages,
 * datagrams longer than the receive buffer, twice each (templates installed, then replayed), a
 * publish between passes (a new generation), query-log sampling at 0.5 set as a reload sets it
 * while the threads run (sampled hits handed over), replays counted by answer class and folded
 * into the engine's counters by a scrape, every argument error path of the addon,
 * response-rate limiting (a four-block table, slip 2, IPv4 and IPv6 sources), templates taken and
 * re-answered at each publish (templates/install), class templates replayed by the threads while
 * their class table is replaced and dropped, the test build's class lookup,
 * servers opened and closed and the handles collected (run with `--expose-gc`). Prints one JSON line: the addon path, the sanitizer
 * libraries mapped into the process, answers compared, mismatches, counters, refused calls.
 */
const YAML = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: txt, type: TXT, data: "hello" }
${THREE_DATA_CENTERS_YAML}records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] } }
  - { name: rr.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, pickDcCount: 3, balanceAlgorithm: round-robin, default: [us] } }
`;
const { addon, error } = loadFastPathAddon();
if (!addon) throw new Error(error);
const config = parseConfigText(YAML);
const engine = (): Engine => threeDataCentersEngine(config);

/** The queries, with ID = index. */
function queries(): Buffer[] {
  const specs: Parameters<typeof buildQuery>[0][] = [];
  for (const name of ['www.example.test', 'WwW.Example.TEST', 'rr.example.test', 'txt.example.test', 'nothere.example.test', 'example.test']) {
    for (let i = 0; i < 40; i++) specs.push({ name, type: 'A', edns: { ecs: `10.${1 + (i % 4)}.${i}.0/24` } });
    for (let i = 0; i < 10; i++) specs.push({ name, type: 'A', edns: { ecs: `2001:db8:${i % 3}::/48` } });
    specs.push({ name, type: 'A', edns: { ecs: '::ffff:10.1.2.0/120' } });
    specs.push({ name, type: 'A', edns: { ecs: '0.0.0.0/0' } });
    specs.push({ name, type: 'A', edns: {} }, { name, type: 'A' }, { name, type: 'TXT', edns: { udpPayloadSize: 512 } });
    specs.push({ name, type: 'A', edns: { dnssecOk: true, ecs: '10.2.0.0/24' } }, { name, type: 'A', edns: { version: 1 } });
    specs.push({ name, type: 'A', edns: { options: [{ code: 10, data: Buffer.alloc(8, 7) }] } });
  }
  const out = specs.map((s, i) => buildQuery({ ...s, id: i }));
  // Malformed: a question cut short, a compression pointer in the question (both answered by JavaScript).
  const cut = Buffer.from(out[0]!.subarray(0, 20));
  cut.writeUInt16BE(out.length, 0);
  out.push(cut);
  const pointer = Buffer.from(out[1]!);
  pointer.writeUInt16BE(out.length, 0);
  pointer[12] = 0xc0;
  pointer[13] = 0x0c;
  out.push(pointer);
  return out;
}

const rejected: string[] = [];
const attempt = (f: () => unknown): void => {
  try {
    f();
  } catch (e) {
    rejected.push((e as Error).message);
  }
};

const addresses = [
  { address: '127.0.0.1', port: 0 },
  { address: '::1', port: 0 },
];
const qs = queries();
let compared = 0;
const mismatches: string[] = [];
const stats: unknown[] = [];
for (const sampleRate of [0, 0.5]) {
  const engines = [engine(), engine()];
  const deps = (e: Engine, fastPath: boolean) => ({
    engine: e,
    metrics: new EngineMetrics(),
    log: e.log,
    afterAnswer: [],
    behaviour: dnsBehaviourSchema.parse({ queryLogSampleRate: sampleRate, fastPath: { enabled: fastPath, threads: 2 } }),
  });
  const plain = new DnsServer(deps(engines[0]!, false), addresses);
  // The fast path starts at rate 0 and gets the pass's rate as a reload would give it (setSampleRate while its threads run).
  const fastDeps = deps(engines[1]!, true);
  const fast = new DnsServer({ ...fastDeps, behaviour: { ...fastDeps.behaviour, queryLogSampleRate: 0 } }, addresses);
  await plain.start();
  await fast.start();
  fast.reconfigure({ listeners: { dns: addresses }, dns: fastDeps.behaviour });
  for (let pass = 0; pass < 3; pass++) {
    if (pass === 2) for (const e of engines) e.publish(withHealthView(e.snapshot, dcsDown('eu')));
    for (let f = 0; f < 2; f++) {
      const node = await exchangeAll(plain.bound[f]!.address, plain.bound[f]!.port, qs);
      const native = await exchangeAll(fast.bound[f]!.address, fast.bound[f]!.port, qs);
      for (let k = 0; k < qs.length; k++) {
        compared++;
        if (!node[k]!.equals(native[k]!) && mismatches.length < 5) mismatches.push(`rate ${sampleRate} pass ${pass} family ${f} #${k}`);
      }
    }
  }
  // A datagram longer than the native receive buffer (4096 bytes) is dropped, not read in part.
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.send(Buffer.alloc(5000), fast.bound[0]!.port, '127.0.0.1', () => r()));
  s.close();
  await new Promise((r) => setTimeout(r, 100));
  // A scrape folds the threads' replays by answer class (classCounts) into the engine's counters.
  await fastDeps.metrics.registry.metrics();
  stats.push(fast.fastPathStats());
  await plain.stop();
  await fast.stop();
}

// Response-rate limiting (native/rate_limit.cc): a small table (4 blocks: evictions) and slip 2,
// every query of the mix (malformed ones too) sent from six IPv4 /24s and from ::1, twice, replies not awaited.
{
  const e = engine();
  const limited = new DnsServer(
    {
      engine: e,
      metrics: new EngineMetrics(),
      log: e.log,
      afterAnswer: [],
      behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: true, threads: 2, rateLimit: { responsesPerSecond: 50, burst: 10, tableSize: 4 } } }),
    },
    addresses,
  );
  await limited.start();
  const senders: { socket: ReturnType<typeof createSocket>; to: string; port: number }[] = [];
  for (let b = 0; b < 6; b++) {
    const socket = createSocket('udp4');
    await new Promise<void>((r) => socket.bind(0, `127.0.${b}.1`, r));
    senders.push({ socket, to: '127.0.0.1', port: limited.bound[0]!.port });
  }
  const six = createSocket({ type: 'udp6', ipv6Only: true });
  await new Promise<void>((r) => six.bind(0, '::1', r));
  senders.push({ socket: six, to: '::1', port: limited.bound[1]!.port });
  for (let round = 0; round < 2; round++) {
    for (const { socket, to, port } of senders) for (const q of qs) socket.send(q, port, to);
    await new Promise((r) => setTimeout(r, 200));
  }
  stats.push(limited.fastPathStats());
  for (const { socket } of senders) socket.close();
  await limited.stop();
}

// Class tables (native/class_table.h): a class template installed for one client, replayed to clients
// of other blocks by the threads while the table is replaced and dropped again and again (the swap
// against the threads' lookups), and the lookup of the test build over every kind of address.
const onBatch = (): void => undefined;
const classChecks = { replayed: 0, lookups: 0 };
{
  const e = engine();
  const handler = new MessageHandler({ engine: e, metrics: new EngineMetrics(), log: e.log, afterAnswer: [], behaviour: dnsBehaviourSchema.parse({}) });
  const lc = e.snapshot.records.find((r) => r.name === 'www.example.test')!.locationClasses!;
  const ranges = lc.classRanges()!;
  const classPort = await freePort();
  const server = addon.open('127.0.0.1', classPort, 2, onBatch, 0);
  addon.setClassTable(server, 1, ranges.v4starts, ranges.v4ids, ranges.v6starts, ranges.v6ids);
  const ecsQueries = (id: number): Buffer[] => [
    buildQuery({ id, name: 'www.example.test', type: 'A', edns: { ecs: '10.1.0.0/24' } }),
    buildQuery({ id, name: 'www.example.test', type: 'A', edns: { ecs: '2001:db8:1::/48' } }),
    buildQuery({ id, name: 'www.example.test', type: 'A', edns: { ecs: '::ffff:10.1.0.0/120' } }),
  ];
  for (const query of ecsQueries(0)) {
    const reuse: ReplyReuse = { scope: -1, answer: undefined, type: 0, classTable: undefined, classId: -1 };
    const peer = parseIp('127.0.0.1');
    const reply = handler.handle(query, 'udp', peer, reuse) as Buffer;
    if (reuse.classTable !== undefined) addon.install(server, query, '127.0.0.1', reply, reuse.scope, 0, 1, reuse.classId);
  }
  const client = createSocket('udp4');
  await new Promise<void>((r) => client.bind(0, '127.0.0.1', r));
  client.on('message', () => classChecks.replayed++);
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 64; i++) {
      const [v4, v6, mapped] = ecsQueries(i);
      v4!.writeUInt8(i, v4!.length - 2);
      v6!.writeUInt8(i, v6!.length - 2);
      for (const q of [v4!, v6!, mapped!]) client.send(q, classPort, '127.0.0.1');
    }
    if (round % 2 === 0) addon.setClassTable(server, 1, ranges.v4starts, ranges.v4ids, ranges.v6starts, ranges.v6ids);
    else addon.dropClassTable(server, 1);
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 100));
  client.close();
  addon.setClassTable(server, 2, ranges.v4starts, ranges.v4ids, ranges.v6starts, ranges.v6ids);
  const n = 4096;
  const words = new Uint32Array(n * 4);
  const families = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    families[i] = i % 2 === 0 ? 4 : 6;
    for (let w = 0; w < 4; w++) words[i * 4 + w] = (Math.imul(i + 1, 2654435761) ^ Math.imul(w + 7, 40503)) >>> 0;
  }
  words.set([0, 0, 0, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], 0);
  const out = new Float64Array(n);
  addon.classLookup(server, 2, words, families, out);
  classChecks.lookups = out.filter((v) => v >= 0).length;
  attempt(() => addon.setClassTable(server, 3, Uint32Array.of(1), Uint32Array.of(0), new Uint32Array(4), Uint32Array.of(0)));
  attempt(() => addon.setClassTable(server, 3, Uint32Array.of(0, 0), Uint32Array.of(0, 0), new Uint32Array(4), Uint32Array.of(0)));
  attempt(() => addon.setClassTable(server, 3, Uint32Array.of(0), Uint32Array.of(0), new Uint32Array(3), Uint32Array.of(0)));
  attempt(() => addon.setClassTable(server, 3, Uint32Array.of(0), Uint32Array.of(0), Uint32Array.of(0, 0, 0, 1), Uint32Array.of(0)));
  attempt(() => addon.setClassTable(server, 0, Uint32Array.of(0), Uint32Array.of(0), new Uint32Array(4), Uint32Array.of(0)));
  attempt(() => (addon.setClassTable as (...a: unknown[]) => unknown)(server, 3, [0], Uint32Array.of(0), new Uint32Array(4), Uint32Array.of(0)));
  attempt(() => addon.classLookup(server, 2, new Uint32Array(3), Uint8Array.of(4), new Float64Array(1)));
  attempt(() => (addon.dropClassTable as (...a: unknown[]) => unknown)(server));
  addon.dropClassTable(server, 99);
  addon.close(server);
}

// Argument errors of every call, and calls on a closed server.
attempt(() => (addon.open as (...a: unknown[]) => unknown)());
attempt(() => addon.open('not an address', 5300, 1, onBatch, 0));
attempt(() => addon.open('127.0.0.1', 0, 1, onBatch, 0));
attempt(() => addon.open('127.0.0.1', 5300, 0, onBatch, 0));
attempt(() => addon.open('127.0.0.1', 5300, 1, onBatch, 2));
attempt(() => (addon.open as (...a: unknown[]) => unknown)('127.0.0.1', 5300, 1, onBatch, 0, 5));
attempt(() => (addon.open as (...a: unknown[]) => unknown)('127.0.0.1', 5300, 1, onBatch, 0, { rate: 10 }));
attempt(() => addon.open('127.0.0.1', 5300, 1, onBatch, 0, { rate: 10, burst: 0, slip: 2, ipv4Prefix: 24, ipv6Prefix: 56, entries: 16 }));
attempt(() => (addon.bump as (...a: unknown[]) => unknown)({}));
attempt(() => (addon.stats as (...a: unknown[]) => unknown)(1));
attempt(() => (addon.close as (...a: unknown[]) => unknown)('x'));
const port = await freePort();
const handle = addon.open('127.0.0.1', port, 1, onBatch, 0);
attempt(() => (addon.reply as (...a: unknown[]) => unknown)(handle, {}, [], new Int32Array(0)));
addon.install(handle, qs[0]!, '127.0.0.1', Buffer.alloc(12), 0, 0, 5, 1);
attempt(() => (addon.replyOne as (...a: unknown[]) => unknown)(handle, 1, 0, Buffer.alloc(1)));
attempt(() => addon.setSampleRate(handle, 1.5));
attempt(() => (addon.templates as (...a: unknown[]) => unknown)(handle));
attempt(() => addon.install(handle, qs[0]!, 'not an address', Buffer.alloc(12), 0, 0));
addon.install(handle, qs[0]!, '127.0.0.1', Buffer.alloc(3), 0, 0);
addon.install(handle, Buffer.alloc(5), '::1', Buffer.alloc(12), 300, 0);
addon.templates(handle, 10);
attempt(() => (addon.setSampleRate as (...a: unknown[]) => unknown)(handle));
attempt(() => (addon.classCounts as (...a: unknown[]) => unknown)(handle, new Uint32Array(1)));
addon.setSampleRate(handle, 0.25);
addon.classCounts(handle, new Float64Array(3));
addon.bump(handle);
addon.close(handle);
addon.close(handle);
for (let i = 0; i < 20; i++) addon.close(addon.open('127.0.0.1', port, 2, onBatch, 0.1));
(globalThis as { gc?: () => void }).gc?.();
await new Promise((r) => setTimeout(r, 50));

const maps = readFileSync('/proc/self/maps', 'utf8');
const sanitizers = [...new Set([...maps.matchAll(/\/(lib(?:asan|ubsan)\.so)[^/\s]*$/gm)].map((m) => m[1]!))];
process.stdout.write(`${JSON.stringify({ addon: process.env.GSLBD_FASTPATH_ADDON, sanitizers, compared, mismatches, stats, rejected, classChecks })}\n`);
