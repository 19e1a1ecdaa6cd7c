import { join } from 'node:path';
import test from 'ava';
import { readImage } from '../../capabilities/geo/compiledImage.js';
import { loadLocationImage } from '../../capabilities/geo/loadSources.js';
import { openLocationDb } from '../../capabilities/geo/openLocationDb.js';
import type { RangeLocationDb } from '../../capabilities/geo/rangeLocationDb.js';
import { formatIp } from '../../core/net/ipAddress.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { createLogger } from '../../core/telemetry/logger.js';
import { allUpHealthView } from '../../core/views/healthView.js';
import { emptyMetricView } from '../../core/views/metricView.js';
import { Engine } from '../../pipeline/engine.js';
import { withHealthView } from '../../pipeline/snapshot.js';
import { loadConfigFile, parseConfigText } from '../../process/loadConfig.js';
import { buildSnapshot } from '../../process/snapshot.js';
import { clientMix } from '../../../test/bench/harness/clientMix.js';
import { CITY_IMAGE, readCityImage, repoRoot } from '../../../test/geo/cityImage.js';
import { buildQuery, randomLetterCase } from '../../../test/support/dnsClient.js';
import { seededRandom } from '../../../test/support/seededRandom.js';
import { engineExampleFiles } from '../../../test/support/exampleConfigs.js';
import { exchangeAll, exchangeAllOrUnanswered } from '../../../test/support/udpExchangeAll.js';
import { dcsDown, fixedContext } from '../../../test/support/selectionFixture.js';
import { THREE_DATA_CENTERS_YAML, threeDataCentersEngine } from '../../../test/support/threeDataCenters.js';
import { loadFastPathAddon } from './fastPathAddon.js';
import { DnsServer } from './dnsServer.js';
import { dnsBehaviourSchema } from './listenerSchema.js';

/**
 * The native fast path against the Node listener, byte for byte: two listeners on one engine
 * (`dns.fastPath` on and off), every example configuration over the GeoLite2-City data, the
 * 3,000-client ECS mix of the benchmarks (IPv4 /24 and IPv6 /56) plus queries without ECS over
 * IPv4 and IPv6. Every query's name has its letter case drawn at random (seeded), as a DNS 0x20
 * resolver sends it. Each query is asked of both listeners twice, the second time in another
 * random letter case (the first pass fills the fast path's templates, the second is answered from
 * them: a template serves every case variant, and its reply carries the question as asked), and
 * both listeners' answers are equal byte for byte; the second pass installs no template (every
 * replayable answer was found under its first pass's case). Then a data center goes down (a
 * published health view) and the fast path's answers equal the Node listener's: no template of the
 * old view survives the publish. The listeners run with `dns.fastPath`'s defaults, so the fast
 * path answers its templates' queries again at the publish (`rewarmTemplates`, on by default)
 * before the queries are asked: those answers nobody asked must move nothing the engine's next
 * answers read — in the quickstart `www` rotates between eu-west and ap-northeast once us-east is
 * down, and an answer that advanced its rotation would put the fast path out of step with the
 * Node listener. So after the pass the engines' rotation stores are equal; then the data center
 * comes back and goes down again, and the queries are asked at once, racing the pass: still byte
 * for byte the Node listener's.
 */

const MIX = 3000;
const NOW = 1_700_000_000_000;

const addon = loadFastPathAddon();
test('the fast-path addon is built (CI builds it through npm install)', (t) => {
  t.truthy(addon.addon, addon.error);
});

const mix = clientMix(openLocationDb(readCityImage(), 'typescript').db as RangeLocationDb, MIX, 20261201);

interface Listeners {
  readonly plain: DnsServer;
  readonly fast: DnsServer;
}

/**
 * The Node listener on one engine and the fast path on another built alike (same snapshot
 * inputs, same seeded context): both see the same queries in the same order (one client socket
 * lands on one native thread), and an answer replayed natively is one that would not have moved
 * rotation or drawn a random number in JavaScript either, so even rotating answers agree.
 */
async function listeners(build: () => Engine): Promise<Listeners & { engines: Engine[] }> {
  const deps = (engine: Engine, fastPath: boolean) => ({
    engine,
    metrics: new EngineMetrics(),
    log: engine.log,
    afterAnswer: [],
    behaviour: dnsBehaviourSchema.parse({ fastPath: { enabled: fastPath, threads: 2 } }),
  });
  const addresses = [
    { address: '127.0.0.1', port: 0 },
    { address: '::1', port: 0 },
  ];
  // dns.fastPath at its defaults but for enabled and threads: templates are re-answered at publish.
  const engines = [build(), build()];
  const plain = new DnsServer(deps(engines[0]!, false), addresses);
  const fast = new DnsServer(deps(engines[1]!, true), addresses);
  await plain.start();
  await fast.start();
  return { plain, fast, engines };
}

/** Waits until the fast path's re-answering pass of the last publish is over. */
async function rewarmed(fast: DnsServer): Promise<void> {
  for (let i = 0; i < 1000 && fast.fastPathRewarm()!.running; i++) await new Promise((r) => setTimeout(r, 10));
}

interface Queries {
  readonly v4: Buffer[];
  readonly v6: Buffer[];
}

/**
 * Queries for every record (a wildcard's `*` as `a`): the ECS mix, then ten without ECS (with and
 * without EDNS); ids by index. Each name's letter case is drawn by `random` (DNS 0x20).
 */
function queriesFor(names: { name: string; type: string }[], random: () => number): Queries {
  const v4: Buffer[] = [];
  const v6: Buffer[] = [];
  const named = (name: string) => randomLetterCase(name, random);
  for (const { name, type } of names) {
    for (const c of mix) v4.push(buildQuery({ id: v4.length & 0xffff, name: named(name), type, edns: { ecs: `${formatIp(c.address)}/${c.sourcePrefix}` } }));
    for (let i = 0; i < 5; i++) {
      for (const edns of [undefined, {}]) {
        v4.push(buildQuery({ id: v4.length & 0xffff, name: named(name), type, ...(edns ? { edns } : {}) }));
        v6.push(buildQuery({ id: v6.length & 0xffff, name: named(name), type, ...(edns ? { edns } : {}) }));
      }
    }
  }
  return { v4, v6 };
}

/**
 * Asks every query of both listeners at once, family by family, in two passes: `passes[0]`, then
 * `passes[1]` (the same queries in other letter cases). Returns the first differences and the
 * templates the fast path installed during the second passes.
 */
async function compare(l: Listeners, passes: readonly Queries[]): Promise<{ compared: number; mismatches: string[]; installedInSecondPass: number }> {
  let compared = 0;
  let installedInSecondPass = 0;
  const mismatches: string[] = [];
  for (const [i, family] of [[0, 'v4'] as const, [1, 'v6'] as const]) {
    const p = l.plain.bound[i]!;
    const f = l.fast.bound[i]!;
    for (let pass = 1; pass <= passes.length; pass++) {
      const qs = passes[pass - 1]![family];
      const installed = l.fast.fastPathStats()!.installed;
      // Two engines, each seeing its queries in order: asked at once, they stay in step.
      const [node, fast] = await Promise.all([exchangeAll(p.address, p.port, qs), exchangeAll(f.address, f.port, qs)]);
      for (let k = 0; k < qs.length; k++) {
        compared++;
        if (!fast[k]!.equals(node[k]!) && mismatches.length < 5)
          mismatches.push(`${family} pass ${pass} #${k}: node ${node[k]!.toString('hex')} fast ${fast[k]!.toString('hex')}`);
      }
      if (pass === 2) installedInSecondPass += l.fast.fastPathStats()!.installed - installed;
    }
  }
  return { compared, mismatches, installedInSecondPass };
}

const dir = join(repoRoot, 'examples');
for (const file of engineExampleFiles().filter((f) => f.endsWith('.yaml'))) {
  test.serial(`fast path = Node listener, byte for byte, over the client mix, before and after a health change (${file})`, async (t) => {
    if (!addon.addon) return t.fail(addon.error);
    const path = join(dir, file);
    const config = loadConfigFile(path).config;
    const geo = openLocationDb(readImage(loadLocationImage({ ...config.geo, sources: [], compiled: CITY_IMAGE }, path).bytes), 'auto').db;
    const l = await listeners(
      () => new Engine(buildSnapshot(path, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW), fixedContext(), createLogger('silent')),
    );
    try {
      const names = config.records.map((r) => ({ name: r.name.startsWith('*.') ? `a${r.name.slice(1)}` : r.name, type: r.type as string }));
      const random = seededRandom(20261202);
      const passes = [queriesFor(names, random), queriesFor(names, random)] as const;
      const before = await compare(l, passes);
      t.deepEqual(before.mismatches, []);
      t.deepEqual(l.engines[1]!.ctx.rotation, l.engines[0]!.ctx.rotation, "the engines' rotation");
      t.is(before.installedInSecondPass, 0, 'a case variant missed the template its first pass installed');
      const stats = l.fast.fastPathStats()!;
      // A configuration whose answers all rotate keeps no template (multi-source.yaml); every other one is answered natively on the second pass.
      if (stats.installed > 0) t.true(stats.hits >= stats.installed, `templates kept but not replayed (${JSON.stringify(stats)})`);
      const down = config.datacenters[0]?.name;
      if (down !== undefined) {
        for (const engine of l.engines) engine.publish(withHealthView(engine.snapshot, dcsDown(down)));
        await rewarmed(l.fast);
        const rewarm = l.fast.fastPathRewarm()!;
        t.false(rewarm.running);
        // Every replayable answer of the old view was a template; the new view keeps some of them replayable unless all its answers rotate.
        if (stats.installed > 0 && file !== 'multi-source.yaml') t.true(rewarm.installed > 0, 'no template re-answered at the publish');
        // Still in step before any query of the new view: the re-answering pass moved no rotation (the quickstart's www tie between eu-west and ap-northeast).
        t.deepEqual(l.engines[1]!.ctx.rotation, l.engines[0]!.ctx.rotation, 'the re-answering pass moved rotation');
        const after = await compare(l, passes);
        t.deepEqual(after.mismatches, [], `after ${down} went down`);
        t.deepEqual(l.engines[1]!.ctx.rotation, l.engines[0]!.ctx.rotation, `after ${down} went down: the engines' rotation`);
        t.is(after.installedInSecondPass, 0, `after ${down} went down: a case variant missed its template`);
        // Up again (every block asked, so templates), then down again and asked at once, racing the re-answering pass.
        for (const engine of l.engines) engine.publish(withHealthView(engine.snapshot, allUpHealthView));
        t.deepEqual((await compare(l, [passes[0]])).mismatches, [], `${down} up again`);
        for (const engine of l.engines) engine.publish(withHealthView(engine.snapshot, dcsDown(down)));
        t.deepEqual((await compare(l, [passes[1]])).mismatches, [], `${down} down again, asked while the pass runs`);
        await rewarmed(l.fast);
        t.deepEqual(l.engines[1]!.ctx.rotation, l.engines[0]!.ctx.rotation, `${down} down again: the engines' rotation`);
      }
      t.log(
        `${before.compared} answers compared per health view; fast path ${JSON.stringify(l.fast.fastPathStats())}; re-answered at the publish ${l.fast.fastPathRewarm()?.installed}`,
      );
    } finally {
      await l.plain.stop();
      await l.fast.stop();
    }
  });
}

const CASE_YAML = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: alias, type: CNAME, data: www.example.test }
      - { name: txt, type: TXT, data: "hello" }
${THREE_DATA_CENTERS_YAML}records:
  - { name: www.example.test, type: A, ttl: 30, service: web, policy: { type: static-proximity, default: [us] } }
`;

/**
 * DNS 0x20 (issue 22 item 2): ten letter-case variants of one question (seeded), asked one after
 * the other, are answered by JavaScript once and natively nine times, each reply byte for byte the
 * Node listener's (the question as asked, the answer's owner names pointing at it) — for a GSLB
 * answer, a CNAME to it, static data, NODATA, NXDOMAIN and a name outside every zone. A name with
 * a `.` inside a label (the presentation form escapes it) is keyed in its own letter case: ten
 * variants, ten answers from JavaScript, still equal to the Node listener's.
 */
test.serial('letter-case variants of a question share one template; the reply carries the case asked', async (t) => {
  if (!addon.addon) return t.fail(addon.error);
  const config = parseConfigText(CASE_YAML);
  const l = await listeners(() => threeDataCentersEngine(config));
  try {
    const random = seededRandom(20261202);
    const p = l.plain.bound[0]!;
    const f = l.fast.bound[0]!;
    /** Asks `variants` one by one of both listeners; returns the fast path's counter deltas and the differing replies. */
    const ask = async (variants: Buffer[]): Promise<{ hits: number; misses: number; installed: number; differing: number }> => {
      const before = l.fast.fastPathStats()!;
      let differing = 0;
      for (const q of variants) {
        const [node] = await exchangeAll(p.address, p.port, [q]);
        const [fast] = await exchangeAll(f.address, f.port, [q]);
        if (!fast!.equals(node!)) differing++;
      }
      const after = l.fast.fastPathStats()!;
      return { hits: after.hits - before.hits, misses: after.misses - before.misses, installed: after.installed - before.installed, differing };
    };
    const questions = [
      { name: 'www.example.test', type: 'A' },
      { name: 'alias.example.test', type: 'A' },
      { name: 'txt.example.test', type: 'TXT' },
      { name: 'www.example.test', type: 'AAAA' },
      { name: 'nothere.example.test', type: 'A' },
      { name: 'elsewhere.invalid', type: 'A' },
    ];
    for (const { name, type } of questions) {
      const variants = Array.from({ length: 10 }, (_, i) =>
        buildQuery({ id: 0, name: i === 0 ? name.toUpperCase() : randomLetterCase(name, random), type, edns: { ecs: '10.1.2.0/24' } }),
      );
      t.deepEqual(await ask(variants), { hits: 9, misses: 1, installed: 1, differing: 0 }, `${name} ${type}`);
    }
    // `Dot.x.example.test` with a dot inside its first label: dns-packet cannot write one, so `_` is replaced on the wire.
    const dotted = Array.from({ length: 10 }, () => {
      const q = buildQuery({ id: 0, name: randomLetterCase('dot_x.example.test', random), type: 'A', edns: { ecs: '10.1.2.0/24' } });
      q[12 + 1 + 3] = 0x2e;
      return q;
    });
    const distinct = new Set(dotted.map((q) => q.toString('hex'))).size;
    t.deepEqual(await ask(dotted), { hits: 10 - distinct, misses: distinct, installed: distinct, differing: 0 }, 'a name with a dot inside a label');
    t.true(distinct > 5, `${distinct} distinct variants`);
  } finally {
    await l.plain.stop();
    await l.fast.stop();
  }
});

/**
 * Mutations of valid queries (seeded), keeping the ID (bytes 0–1: query `i` carries `i & 0xffff`,
 * so replies match): one to three of a flipped bit, a random byte, a truncation, random bytes
 * appended, the last bytes (the ECS address when there is one: other client blocks of an
 * installed template) randomised, and a random header byte (flags, counts).
 */
function fuzzedQueries(base: readonly Buffer[], count: number, random: () => number): Buffer[] {
  const byte = (): number => Math.floor(random() * 256);
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    let q = Buffer.from(base[Math.floor(random() * base.length)]!);
    for (let m = 1 + Math.floor(random() * 3); m > 0; m--) {
      const at = 2 + Math.floor(random() * Math.max(1, q.length - 2));
      switch (Math.floor(random() * 6)) {
        case 0:
          if (at < q.length) q[at]! ^= 1 << Math.floor(random() * 8);
          break;
        case 1:
          if (at < q.length) q[at] = byte();
          break;
        case 2:
          q = q.subarray(0, at);
          break;
        case 3:
          q = Buffer.concat([q, Buffer.from(Array.from({ length: 1 + Math.floor(random() * 8) }, byte))]);
          break;
        case 4:
          for (let k = 1; k <= Math.min(4, q.length - 12); k++) q[q.length - k] = byte();
          break;
        default:
          if (q.length >= 12) q[2 + Math.floor(random() * 10)] = byte();
      }
    }
    q = Buffer.from(q);
    q.writeUInt16BE(i & 0xffff, 0);
    out.push(q);
  }
  return out;
}

/**
 * Issue 22's differential on fuzzed queries: 100,000 mutations (seeded) of the quickstart's
 * queries over the client mix, both families, asked twice of the Node listener and the fast
 * path — the first time JavaScript answers what the native parser refuses and installs a
 * template for what it may replay, the second time the fast path answers what it holds. Every
 * reply, and every query left unanswered, is the same on both listeners.
 */
test.serial('fast path = Node listener, byte for byte, on 100,000 fuzzed queries asked twice', async (t) => {
  if (!addon.addon) return t.fail(addon.error);
  t.timeout(10 * 60_000);
  const path = join(dir, 'quickstart.yaml');
  const config = loadConfigFile(path).config;
  const geo = openLocationDb(readImage(loadLocationImage({ ...config.geo, sources: [], compiled: CITY_IMAGE }, path).bytes), 'auto').db;
  const l = await listeners(
    () => new Engine(buildSnapshot(path, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW), fixedContext(), createLogger('silent')),
  );
  try {
    const random = seededRandom(22);
    const names = config.records.map((r) => ({ name: r.name, type: r.type as string }));
    const base = queriesFor(names, random);
    const fuzz = { v4: fuzzedQueries(base.v4, 70_000, random), v6: fuzzedQueries(base.v6, 30_000, random) };
    let compared = 0;
    let unanswered = 0;
    const mismatches: string[] = [];
    const hitsBefore = l.fast.fastPathStats()!.hits;
    for (let pass = 1; pass <= 2; pass++) {
      for (const [i, family] of [[0, 'v4'] as const, [1, 'v6'] as const]) {
        const p = l.plain.bound[i]!;
        const f = l.fast.bound[i]!;
        const qs = fuzz[family];
        const [node, fast] = await Promise.all([exchangeAllOrUnanswered(p.address, p.port, qs, 100), exchangeAllOrUnanswered(f.address, f.port, qs, 100)]);
        for (let k = 0; k < qs.length; k++) {
          compared++;
          if (!node[k]) unanswered++;
          const same = node[k] === undefined ? fast[k] === undefined : fast[k] !== undefined && fast[k]!.equals(node[k]!);
          if (!same && mismatches.length < 5)
            mismatches.push(`${family} pass ${pass} #${k} query ${qs[k]!.toString('hex')}: node ${node[k]?.toString('hex')} fast ${fast[k]?.toString('hex')}`);
        }
      }
    }
    t.deepEqual(mismatches, []);
    const hits = l.fast.fastPathStats()!.hits - hitsBefore;
    t.log(`${compared} replies compared, ${unanswered} queries unanswered by both; ${hits} answered natively`);
    // The fuzzed queries reach the native path: replays of what the first pass installed (7,940-7,949 with this seed).
    t.true(hits >= 5_000, `${hits} fuzzed queries answered natively`);
  } finally {
    await l.plain.stop();
    await l.fast.stop();
  }
});
