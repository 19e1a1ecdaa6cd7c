import { createSocket } from 'node:dgram';
import { join } from 'node:path';
import test from 'ava';
import { readImage } from '../../capabilities/geo/compiledImage.js';
import { loadLocationImage } from '../../capabilities/geo/loadSources.js';
import { openLocationDb } from '../../capabilities/geo/openLocationDb.js';
import { unpackId, unpackPrefix } from '../../core/lpm/rangeTable.js';
import { formatIp, ipv4, ipv6, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { ipv4BlocksScope } from '../../core/net/ipv4InIpv6.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import type { LocationClasses } from '../../pipeline/selection/answerClasses.js';
import { Engine } from '../../pipeline/engine.js';
import { withHealthView } from '../../pipeline/snapshot.js';
import { loadConfigFile } from '../../process/loadConfig.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { CITY_IMAGE, repoRoot } from '../../../test/geo/cityImage.js';
import { buildQuery } from '../../../test/support/dnsClient.js';
import { seededRandom } from '../../../test/support/seededRandom.js';
import { dcsDown, fixedContext } from '../../../test/support/selectionFixture.js';
import { exchangeAll } from '../../../test/support/udpExchangeAll.js';
import { loadFastPathAddon, type FastPathHandle } from './fastPathAddon.js';
import { DnsServer } from './dnsServer.js';
import { MessageHandler, type ReplyReuse } from './handleMessage.js';
import { dnsBehaviourSchema } from './listenerSchema.js';

/**
 * Class templates (issue 22 item 2, README "Fast path"): the fast path finds the client's location
 * class in a native copy of the record's class tables and replays the class's template to clients
 * of blocks never asked, with their own ECS scope.
 *
 * 1. The native lookup equals `LocationClasses.lookup` + `ipv4BlocksScope` on 400,000 seeded
 *    addresses over the quickstart's tables on GeoLite2-City: random IPv4 and IPv6, range starts and
 *    the addresses just below them, IPv4-mapped, and the IPv6 blocks that carry IPv4 (6to4, Teredo,
 *    ::/96, NAT64, SIIT) with their borders.
 * 2. Against the real listeners (the Node one and the fast path, one engine each): one client of a
 *    class asked, then hundreds of never-asked clients of that class in other blocks (other block
 *    prefixes), with IPv4, IPv6 and IPv4-mapped ECS: every one answered natively by the class
 *    template, byte for byte the Node listener's answer (its own ECS scope).
 * 3. Without ECS (the resolver is the client): a class template installed for one resolver's query
 *    answers another resolver of the class in another block with the Node listener's bytes.
 */

const NOW = 1_700_000_000_000;
const { addon, error } = loadFastPathAddon();
const path = join(repoRoot, 'examples', 'quickstart.yaml');
const config = loadConfigFile(path).config;
const geo = openLocationDb(readImage(loadLocationImage({ ...config.geo, sources: [], compiled: CITY_IMAGE }, path).bytes), 'auto').db;
const engine = (): Engine =>
  new Engine(buildSnapshot(path, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW), fixedContext(), createLogger('silent'));

/** The quickstart's distinct class tables (records with equal reads share one). */
function classTables(e: Engine): LocationClasses[] {
  const out = new Set<LocationClasses>();
  for (const r of e.snapshot.records) if (r.locationClasses) out.add(r.locationClasses);
  return [...out];
}

/** A free UDP port on 127.0.0.1 (bound and released). */
async function freePort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Seeded addresses of every kind the lookup meets (see the file comment). */
function addresses(lc: LocationClasses, count: number, random: () => number): IpAddress[] {
  const ranges = lc.classRanges()!;
  const word = (): number => Math.floor(random() * 0x1_0000_0000) >>> 0;
  const out: IpAddress[] = [];
  const special = [
    [0x20020000, 16],
    [0x20010000, 32],
    [0, 96],
    [0x0064ff9b, 96],
  ] as const;
  while (out.length < count) {
    const kind = Math.floor(random() * 8);
    if (kind === 0) out.push(ipv4(word()));
    else if (kind === 1) {
      const start = ranges.v4starts[Math.floor(random() * ranges.v4starts.length)]!;
      out.push(ipv4(random() < 0.5 ? start : start - 1));
    } else if (kind === 2) out.push(ipv6(word(), word(), word(), word()));
    else if (kind === 3) {
      const i = Math.floor(random() * ranges.v6ids.length) * 4;
      const s = ranges.v6starts;
      if (random() < 0.5 || (s[i]! | s[i + 1]! | s[i + 2]! | s[i + 3]!) === 0) out.push(ipv6(s[i]!, s[i + 1]!, s[i + 2]!, s[i + 3]!));
      else {
        // The address just below the start.
        const w = [s[i]!, s[i + 1]!, s[i + 2]!, s[i + 3]!];
        for (let k = 3; k >= 0; k--) {
          if (w[k] !== 0) {
            w[k] = (w[k]! - 1) >>> 0;
            break;
          }
          w[k] = 0xffffffff;
        }
        out.push(ipv6(w[0]!, w[1]!, w[2]!, w[3]!));
      }
    } else if (kind === 4) out.push(ipv6(0, 0, 0xffff, word()));
    else if (kind === 5) {
      const [w0, prefix] = special[Math.floor(random() * special.length)]!;
      if (prefix === 16) out.push(ipv6((w0 | (word() & 0xffff)) >>> 0, word(), word(), word()));
      else if (prefix === 32) out.push(ipv6(w0, word(), word(), word()));
      else out.push(ipv6(w0, 0, 0, word()));
    } else if (kind === 6) out.push(ipv6(0, 0, 0xffff0000, word()));
    else {
      // Just inside and just outside the blocks' borders.
      const borders = [0x20010001, 0x2000ffff, 0x20030000, 0x2001ffff, 0x0064ff9a, 0x0064ff9c, 0, 1];
      const w0 = borders[Math.floor(random() * borders.length)]!;
      out.push(ipv6(w0, random() < 0.5 ? 0 : word(), random() < 0.5 ? (random() < 0.5 ? 1 : 0xfffe) : word(), word()));
    }
  }
  return out;
}

test('the native class lookup equals LocationClasses.lookup and ipv4BlocksScope on 400,000 seeded addresses', async (t) => {
  if (!addon) return t.fail(error);
  const e = engine();
  const tables = classTables(e);
  t.true(tables.length > 0, 'the quickstart has class tables');
  const server: FastPathHandle = addon.open('127.0.0.1', await freePort(), 1, () => undefined, 0);
  try {
    const random = seededRandom(20261203);
    let compared = 0;
    const differing: string[] = [];
    for (const [k, lc] of tables.entries()) {
      const r = lc.classRanges()!;
      addon.setClassTable(server, k + 1, r.v4starts, r.v4ids, r.v6starts, r.v6ids);
      const list = addresses(lc, Math.ceil(400_000 / tables.length), random);
      const words = new Uint32Array(list.length * 4);
      const families = new Uint8Array(list.length);
      list.forEach((a, i) => {
        words.set([a.w0, a.w1, a.w2, a.w3], i * 4);
        families[i] = a.family;
      });
      const out = new Float64Array(list.length);
      addon.classLookup(server, k + 1, words, families, out);
      for (let i = 0; i < list.length; i++) {
        const a = list[i]!;
        const packed = lc.lookup(a);
        const prefix = unpackPrefix(packed);
        const floor = ipv4BlocksScope(a);
        const want = unpackId(packed) * 65536 + prefix * 256 + Math.max(floor, prefix);
        compared++;
        if (out[i] !== want && differing.length < 5) differing.push(`${formatIp(a)}: native ${out[i]}, TypeScript ${want}`);
      }
    }
    t.deepEqual(differing, []);
    t.true(compared >= 400_000);
    // A dropped table is no longer found.
    addon.dropClassTable(server, 1);
    const out = new Float64Array(1);
    addon.classLookup(server, 1, new Uint32Array(4), Uint8Array.of(4), out);
    t.is(out[0], -1);
    t.throws(() => addon.setClassTable(server, 1, Uint32Array.of(5), Uint32Array.of(0), new Uint32Array(4), Uint32Array.of(0)), { message: /IPv4/ });
    t.throws(() => addon.setClassTable(server, 0, Uint32Array.of(0), Uint32Array.of(0), new Uint32Array(4), Uint32Array.of(0)), { message: /id/ });
  } finally {
    addon.close(server);
  }
});

/** The www record's class table, and `count` client subnets of the class of `first` in other class blocks (IPv4 or IPv6, as `first`), each as ECS text. */
function sameClassClients(lc: LocationClasses, first: IpAddress, count: number, sourcePrefix: number): { clients: string[]; prefixes: Set<number> } {
  const cls = unpackId(lc.lookup(first));
  const ranges = lc.classRanges()!;
  const clients: string[] = [];
  const prefixes = new Set<number>();
  const blocks = new Set<string>();
  const v4 = first.family === 4;
  const n = v4 ? ranges.v4ids.length : ranges.v6ids.length;
  const step = Math.max(1, Math.floor(n / (count * 20)));
  for (let i = 0; i < n && clients.length < count; i += step) {
    if ((v4 ? ranges.v4ids[i] : ranges.v6ids[i]) !== cls) continue;
    const s = ranges.v6starts;
    const a = v4 ? ipv4(ranges.v4starts[i]!) : ipv6(s[i * 4]!, s[i * 4 + 1]!, s[i * 4 + 2]!, s[i * 4 + 3]!);
    if (a.family !== first.family || a.mapped) continue;
    // The client is the ECS address as sent: the range start masked to the source prefix must still be of the class.
    const text = `${formatIp(a)}/${sourcePrefix}`;
    const masked = parseIp(formatIp(a));
    const packed = lc.lookup(masked);
    if (unpackId(packed) !== cls) continue;
    const scope = Math.max(unpackPrefix(packed), ipv4BlocksScope(masked));
    if (scope > sourcePrefix) continue;
    const block = `${scope}:${formatIp(a)}`;
    if (blocks.has(block)) continue;
    blocks.add(block);
    prefixes.add(scope);
    clients.push(text);
  }
  return { clients, prefixes };
}

test.serial('clients of one class in blocks never asked are answered natively from its class template, byte for byte the Node listener', async (t) => {
  if (!addon) return t.fail(error);
  const engines = [engine(), engine()];
  const deps = (e: Engine, fastPath: boolean) => ({
    engine: e,
    metrics: new EngineMetrics(),
    log: e.log,
    afterAnswer: [],
    behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: fastPath, threads: 2, rewarmTemplates: false } }),
  });
  const addressList = [
    { address: '127.0.0.1', port: 0 },
    { address: '::1', port: 0 },
  ];
  const plain = new DnsServer(deps(engines[0]!, false), addressList);
  const fast = new DnsServer(deps(engines[1]!, true), addressList);
  await plain.start();
  await fast.start();
  try {
    const www = engines[1]!.snapshot.records.find((r) => r.name === 'www.example.com' || r.name.startsWith('www.'))!;
    const lc = www.locationClasses!;
    t.truthy(lc, 'www has class tables');
    const cases = [
      { label: 'IPv4 ECS /32', first: parseIp('81.2.69.160'), source: 32, mapped: false },
      { label: 'IPv4 ECS /24', first: parseIp('89.160.20.0'), source: 24, mapped: false },
      { label: 'IPv4-mapped ECS /120', first: parseIp('81.2.69.0'), source: 24, mapped: true },
      { label: 'IPv6 ECS /56', first: parseIp('2a02:cf40::'), source: 56, mapped: false },
    ];
    for (const c of cases) {
      const { clients, prefixes } = sameClassClients(lc, c.first, 150, c.source);
      t.true(clients.length >= 50, `${c.label}: ${clients.length} clients of the class`);
      t.true(prefixes.size >= 3, `${c.label}: block prefixes ${[...prefixes].join(',')}`);
      const ecs = (text: string): string => (c.mapped ? `::ffff:${text.split('/')[0]}/${96 + c.source}` : text);
      // exchangeAll matches replies by ID = index.
      const q = (text: string, id: number): Buffer => buildQuery({ id, name: www.name, type: 'A', edns: { ecs: ecs(text) } });
      const firstQuery = [q(`${formatIp(c.first)}/${c.source}`, 0)];
      const others = clients.map(q);
      // The first of the class (a JavaScript answer, installed), then every other one.
      for (const qs of [firstQuery, others]) {
        const before = fast.fastPathStats()!;
        const family = c.first.family === 4 || c.mapped ? 0 : 1;
        const p = plain.bound[family]!;
        const f = fast.bound[family]!;
        const node = await exchangeAll(p.address, p.port, qs);
        const native = await exchangeAll(f.address, f.port, qs);
        const differing = qs.filter((_, i) => !native[i]!.equals(node[i]!)).length;
        const after = fast.fastPathStats()!;
        const delta = { hits: after.hits - before.hits, classHits: after.classHits - before.classHits, misses: after.misses - before.misses, differing };
        if (qs === firstQuery) t.deepEqual(delta, { hits: 0, classHits: 0, misses: 1, differing: 0 }, `${c.label}: the first client`);
        else t.deepEqual(delta, { hits: qs.length, classHits: qs.length, misses: 0, differing: 0 }, `${c.label}: ${qs.length} clients in other blocks`);
      }
      t.log(`${c.label}: ${clients.length} clients in other blocks, block prefixes ${[...prefixes].sort((a, b) => a - b).join(',')}`);
    }
  } finally {
    await plain.stop();
    await fast.stop();
  }
});

test('without ECS, a class template of one resolver answers another resolver of the class in another block with the Node listener bytes', async (t) => {
  if (!addon) return t.fail(error);
  const e = engine();
  const lc = classTables(e).find((c) => e.snapshot.records.some((r) => r.locationClasses === c && r.name.startsWith('www.')))!;
  const name = e.snapshot.records.find((r) => r.locationClasses === lc && r.name.startsWith('www.'))!.name;
  const handler = new MessageHandler({ engine: e, metrics: new EngineMetrics(), log: e.log, afterAnswer: [], behaviour: dnsBehaviourSchema.parse({}) });
  const port = await freePort();
  const server = addon.open('127.0.0.1', port, 1, () => undefined, 0);
  try {
    const loopback = parseIp('127.0.0.1');
    const packed = lc.lookup(loopback);
    // Another resolver of 127.0.0.1's class outside its block (scanned from 1.0.0.0 by /8s).
    let other: IpAddress | undefined;
    for (let top = 1; top < 224 && other === undefined; top++) {
      const a = ipv4(((top << 24) | 0x010203) >>> 0);
      const p = lc.lookup(a);
      if (unpackId(p) === unpackId(packed) && a.w0 >>> (32 - unpackPrefix(packed)) !== loopback.w0 >>> (32 - unpackPrefix(packed))) other = a;
    }
    t.truthy(other, "no other resolver of 127.0.0.1's class");
    const r = lc.classRanges()!;
    addon.setClassTable(server, 7, r.v4starts, r.v4ids, r.v6starts, r.v6ids);
    for (const edns of [undefined, {}]) {
      const query = buildQuery({ id: 0x1234, name, type: 'A', ...(edns ? { edns } : {}) });
      const reuse: ReplyReuse = { scope: -1, answer: undefined, type: 0, classTable: undefined, classId: -1 };
      const reply = handler.handle(query, 'udp', other!, reuse) as Buffer;
      t.is(reuse.classTable, lc, 'the answer is reusable for its class');
      t.true(addon.install(server, query, formatIp(other!), reply, reuse.scope, 0, 7, reuse.classId));
      // exchangeAll matches replies by ID = index: 0, another ID than the installing query's.
      const asked = buildQuery({ id: 0, name, type: 'A', ...(edns ? { edns } : {}) });
      const before = addon.stats(server);
      const [native] = await exchangeAll('127.0.0.1', port, [asked]);
      const after = addon.stats(server);
      const expected = handler.handle(asked, 'udp', loopback, undefined) as Buffer;
      t.deepEqual(native, expected, edns ? 'EDNS without ECS' : 'no EDNS');
      t.is(after.classHits - before.classHits, 1);
    }
  } finally {
    addon.close(server);
  }
});

/** Waits until the fast path's copy of class tables of the last publish is over. */
async function copied(fast: DnsServer): Promise<NonNullable<ReturnType<DnsServer['fastPathClassTables']>>> {
  for (let i = 0; i < 1000 && fast.fastPathClassTables()!.running; i++) await new Promise((r) => setTimeout(r, 10));
  return fast.fastPathClassTables()!;
}

/**
 * The engine's class tables are copied at start and at each publish that compiled the records again
 * (one per event-loop turn), deduplicated by table; a publish of a health view copies nothing and
 * keeps them; a snapshot whose records read the location otherwise gets its own tables and the old
 * copies are dropped. The first never-asked client of a class after a publish is then answered by
 * class as soon as one client of the class was answered.
 */
test.serial('class tables are copied at start and at a publish of new records, kept across health publishes, dropped when unreferenced', async (t) => {
  if (!addon) return t.fail(error);
  const e = engine();
  const fast = new DnsServer(
    {
      engine: e,
      metrics: new EngineMetrics(),
      log: e.log,
      afterAnswer: [],
      behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: true, threads: 1, rewarmTemplates: false } }),
    },
    [{ address: '127.0.0.1', port: 0 }],
  );
  await fast.start();
  try {
    const tables = e.classTables();
    t.true(tables.length > 0);
    const start = await copied(fast);
    t.like(start, { tables: tables.length, held: tables.length, running: false });
    t.log(`copied ${start.tables} class tables of the quickstart over GeoLite2-City in ${start.ms.toFixed(1)} ms at start`);
    e.publish(withHealthView(e.snapshot, dcsDown('us-east')));
    t.is(e.classTables(), tables, 'a health publish keeps the list');
    t.like(await copied(fast), { tables: 0, held: tables.length });
    // The same configuration compiled again: the same tables (shared by reads), nothing copied or dropped.
    e.publish(buildSnapshot(path, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW));
    t.not(e.classTables(), tables);
    t.like(await copied(fast), { tables: 0, held: tables.length });
    // Records that read the location otherwise: their own tables; the old copies are dropped.
    const other = loadConfigFile(path).config;
    const withRule = { ...other, records: other.records.map((r) => ({ ...r, policy: { ...r.policy, default: ['eu-west'] } })) } as typeof other;
    e.publish(buildSnapshot(path, withRule, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW));
    const next = e.classTables();
    t.true(
      next.every((lc) => !tables.includes(lc)),
      'other reads, other tables',
    );
    t.like(await copied(fast), { tables: next.length, held: next.length });
    // One client of a class answered by JavaScript, then a client of another block of the class natively.
    const f = fast.bound[0]!;
    const ask = (ecs: string) => exchangeAll(f.address, f.port, [buildQuery({ id: 0, name: 'www.example.test', type: 'A', edns: { ecs } })]);
    const before = fast.fastPathStats()!;
    await ask('81.2.69.0/24');
    const lc = e.snapshot.records.find((r) => r.name === 'www.example.test')!.locationClasses!;
    t.true(next.includes(lc));
    const cls = unpackId(lc.lookup(parseIp('81.2.69.0')));
    const { clients } = sameClassClients(lc, parseIp('81.2.69.0'), 5, 24);
    for (const c of clients) await ask(c);
    const after = fast.fastPathStats()!;
    t.like({ misses: after.misses - before.misses, classHits: after.classHits - before.classHits }, { misses: 1, classHits: clients.length }, `class ${cls}`);
  } finally {
    await fast.stop();
  }
});
