import { join } from 'node:path';
import test from 'ava';
import { loadConfigFile, parseConfigText } from '../../src/process/loadConfig.js';
import type { Config } from '../../src/process/configSchema.js';
import { presentData } from '../../src/core/dns/presentation.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { withHealthView, type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { formatIp, ipv4, ipv6, maskWord, parseIp, type IpAddress } from '../../src/core/net/ipAddress.js';
import { loadLocationImage } from '../../src/capabilities/geo/loadSources.js';
import type { LocationDb } from '../../src/core/location/locationDb.js';
import type { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { readImage } from '../../src/capabilities/geo/compiledImage.js';
import type { Client } from '../../src/core/model/query.js';
import { allUpHealthView, type HealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import type { ResolveContext } from '../../src/core/views/resolveContext.js';
import { RotationStore } from '../../src/core/views/rotationStore.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { type Answer } from '../../src/core/model/query.js';
import { clientMix } from '../bench/harness/clientMix.js';
import { opaque } from '../support/prefixLocationDb.js';
import { dcsDown } from '../support/selectionFixture.js';
import { CopyableRandom, seededRandom } from '../support/seededRandom.js';
import { CITY_IMAGE, readCityImage, repoRoot } from './cityImage.js';
import { engineExampleFiles } from '../support/exampleConfigs.js';

/**
 * The ECS scope over the whole client mix (3,000 ECS clients drawn from the real GeoLite2-City
 * networks, IPv4 and IPv6 interleaved), for every configuration in `examples/` and one record of
 * every policy kind:
 * - differential: answers, TTLs, rcodes, data centers and scopes through the decision cache equal
 *   those of the pipeline without it, in three query orders and under several health views — the
 *   cache is keyed and scoped per family, and records every input it reads;
 * - scope safety (RFC 7871 §7.3, the property a resolver relies on): for a sample of answers,
 *   random addresses inside the returned scope block — and an address of every IPv4-carrying IPv6
 *   range the block touches (`src/core/net/ipv4InIpv6.ts`) — get the same answer.
 */

const MIX_SIZE = 3000;

/** Query orders: every IPv6 client first, every IPv4 client first, and shuffled; each run starts on empty caches. */
type Order = 'ipv6 first' | 'ipv4 first' | 'shuffled';
const ORDERS: readonly Order[] = ['ipv6 first', 'ipv4 first', 'shuffled'];

/** One record of every policy kind, over real country and continent codes. */
const POLICY_KINDS = `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters:
  - { name: us-east, location: NA.US, lat: 39.0, lon: -77.5 }
  - { name: us-west, location: NA.US, lat: 37.4, lon: -122.1 }
  - { name: eu-west, location: EU.NL, lat: 52.4, lon: 4.9 }
  - { name: eu-central, location: EU.DE, lat: 50.1, lon: 8.7 }
  - { name: ap-northeast, location: AS.JP, lat: 35.7, lon: 139.7 }
  - { name: sa-east, location: SA.BR, lat: -23.5, lon: -46.6 }
services:
  - name: web
    endpoints:
      - { dc: us-east, address: 192.0.2.1 }
      - { dc: us-west, address: 192.0.2.2 }
      - { dc: eu-west, address: 192.0.2.3 }
      - { dc: eu-central, address: 192.0.2.4 }
      - { dc: ap-northeast, address: 192.0.2.5 }
      - { dc: sa-east, address: 192.0.2.6 }
      - { dc: eu-west, address: "2001:db8::3" }
      - { dc: ap-northeast, address: "2001:db8::5" }
  - name: pool
    endpoints:
      - { dc: us-east, address: 203.0.113.1 }
      - { dc: us-east, address: 203.0.113.2, weight: 3 }
      - { dc: eu-west, address: 203.0.113.3 }
      - { dc: ap-northeast, address: 203.0.113.4 }
records:
  - { name: prox.example.test, type: A, service: web, policy: { type: static-proximity, default: [us-east] } }
  - { name: prox.example.test, type: AAAA, service: web }
  - { name: two.example.test, type: A, service: web, policy: { type: static-proximity, pickDcCount: 2, balanceAlgorithm: all } }
  - { name: rr.example.test, type: A, service: pool, policy: { type: static-proximity, balanceAlgorithm: round-robin } }
  - { name: wr.example.test, type: A, service: pool, policy: { type: static-proximity, balanceAlgorithm: weighted-random } }
  - { name: near.example.test, type: A, service: pool, policy: { type: static-proximity, balanceAlgorithm: nearest } }
  - name: st.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
        - { when: { clientSubnet: [10.20.30.0/24, "2001:db8:1::/48", "2a02:2e0::/29"] }, dcs: [ap-northeast] }
        - { when: { clientLocation: ["*.DE", "*.AT", "*.CH"] }, dcs: [eu-central, eu-west] }
        - { when: { clientLocation: ["*.FR"] }, dcs: [eu-central, eu-west] }
        - { when: { clientLocation: EU }, dcs: [eu-west] }
        - { when: { clientLocation: [NA, SA] }, dcs: [[us-east, us-west]] }
        - { dcs: [sa-east] }
  - name: ms.example.test
    type: A
    service: web
    policy:
      type: static
      subnetOverlap: most-specific
      rules:
        - { when: { clientSubnet: [81.0.0.0/8, "2a00::/12"] }, dcs: [eu-west] }
        - { when: { any: [{ clientSubnet: [81.2.0.0/16] }, { clientLocation: "*.GB" }] }, dcs: [eu-central] }
        - { when: { not: { clientLocation: EU } }, dcs: [us-east] }
  - name: pol.example.test
    type: A
    service: web
    policies:
      subnetOverlap: first
      rules:
        - { name: japan, when: { clientLocation: "*.JP" }, action: far }
        - { name: korea, when: { clientLocation: "*.KR" }, action: asia }
        - { name: lab, when: { all: [{ clientSubnet: [193.0.0.0/16, "2001:67c::/32"] }, { clientLocation: EU }] }, action: pref }
  - name: metric.example.test
    type: A
    service: web
    policy: { type: multi-source, source: host, metric: cpu, criterion: lowest }
  - name: "*.w.example.test"
    type: A
    service: web
    policies:
      rules:
        - { name: by-name, when: { qname: [a.w.example.test] }, action: asia }
actions:
  - { name: asia, type: view, dcs: [ap-northeast] }
  - { name: far, type: view, dcs: [eu-central] }
  - { name: south, type: view, dcs: [sa-east] }
  - { name: pref, type: preferred-locations, locations: ["EU.DE", "*.NL", "NA"] }
policies:
  rules:
    - { name: brazil, when: { clientLocation: "*.BR" }, action: south }
`;

interface Scenario {
  readonly name: string;
  readonly config: Config;
  readonly file: string;
}

function scenarios(): Scenario[] {
  const out: Scenario[] = [];
  const dir = join(repoRoot, 'examples');
  const files = engineExampleFiles()
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(dir, f));
  for (const file of files) out.push({ name: file.slice(repoRoot.length + 1), config: loadConfigFile(file).config, file });
  out.push({ name: 'policy kinds', config: parseConfigText(POLICY_KINDS), file: join(repoRoot, 'test/geo/policyKinds.yaml') });
  return out;
}

const loaded = new Map<string, LocationDb>();

/** The example's own custom entries over the compiled GeoLite2-City data (loaded once per scenario). */
function locationDb(s: Scenario): LocationDb {
  let db = loaded.get(s.name);
  if (!db) {
    const image = readImage(loadLocationImage({ ...s.config.geo, sources: [], compiled: CITY_IMAGE }, s.file).bytes);
    loaded.set(s.name, (db = openLocationDb(image, 'auto').db));
  }
  return db;
}

/** Every GSLB record as a question: name (a wildcard's `*` as `a`, which one policy names) and type. */
function questions(config: Config): { name: string; type: number }[] {
  return config.records.map((r) => ({ name: r.name.startsWith('*.') ? `a${r.name.slice(1)}` : r.name, type: TYPE_CODES[r.type] }));
}

/** All up in every order, then each data center down on its own, shuffled. */
function runs(config: Config): { view: HealthView; order: Order }[] {
  return [
    ...ORDERS.map((order) => ({ view: allUpHealthView, order })),
    ...config.datacenters.map((d) => ({ view: dcsDown(d.name), order: 'shuffled' as const })),
  ];
}

function ordered(clients: readonly Client[], order: Order): Client[] {
  const s = shuffled(clients, 33);
  if (order === 'shuffled') return s;
  const first = order === 'ipv6 first' ? 6 : 4;
  return [...s.filter((c) => c.address.family === first), ...s.filter((c) => c.address.family !== first)];
}

function shape(a: Answer): string {
  return JSON.stringify([a.rcode, a.answers.map((r) => [r.name, r.type, r.ttl, presentData(r.type, r.data)]), a.scope, a.dcs]);
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const NOW = 1_700_000_000_000;

/**
 * Clients of no real network but at the borders that matter: the IPv6 ranges next to and inside
 * the IPv4-carrying ones, IPv4-mapped clients (folded to IPv4 as the front doors do), and IPv4
 * clients around the policy-kinds record's 10.20.30.0/24 whose location is unknown, like that of
 * the low IPv6 ones (one answer class, so one cache key but for the family).
 */
const BORDER_CLIENTS: Client[] = [
  '::/64',
  '::5/128',
  '::1/128',
  '::1:0:0/96',
  '::fffe:0:0/96',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2001::/32',
  '2001:1::/48',
  '2002:c000:200::/48',
  '2003::/48',
  '::ffff:193.0.14.0/120',
  '::ffff:10.20.30.0/120',
  '10.20.31.0/24',
  '10.0.0.0/8',
  '10.20.30.0/24',
  '10.20.28.0/23',
].map((text) => {
  const [a, p] = text.split('/');
  const address = parseIp(a!);
  return { address, sourcePrefix: address.mapped ? Number(p) - 96 : Number(p), fromEcs: true };
});

const mix: Client[] = [...clientMix(openLocationDb(readCityImage(), 'typescript').db as RangeLocationDb, MIX_SIZE, 20261201), ...BORDER_CLIENTS];

test('the client mix has both families, interleaved', (t) => {
  const v6 = mix.slice(0, MIX_SIZE).filter((c) => c.address.family === 6).length;
  t.true(v6 > 200 && v6 < 400, `${v6} IPv6 clients of ${mix.length}`);
  t.true(mix.slice(0, 100).some((c) => c.address.family === 6) && mix.slice(0, 100).some((c) => c.address.family === 4));
});

for (const scenario of scenarios()) {
  test(`differential: decision cache = pipeline over the whole client mix, three orders, every health view (${scenario.name})`, (t) => {
    const geo = locationDb(scenario);
    const state = { geo, health: allUpHealthView, metrics: emptyMetricView };
    const asked = questions(scenario.config);
    let compared = 0;
    let reused = 0;
    for (const { view, order } of runs(scenario.config)) {
      {
        // Fresh snapshots per run: every order starts on empty caches.
        const cached = withHealthView(buildSnapshot(scenario.file, scenario.config, state, NOW), view);
        const reference = withHealthView(buildSnapshot(scenario.file, scenario.config, state, NOW, undefined, { reuseDecisions: false }), view);
        const random = new CopyableRandom(7);
        const ctx: ResolveContext = { random: random.next, now: () => NOW, rotation: new RotationStore() };
        for (const client of ordered(mix, order)) {
          for (const { name, type } of asked) {
            const q = { name, type, client, transport: 'udp' as const };
            const copy = random.copy();
            const want = resolve(q, reference, { random: copy.next, now: () => NOW, rotation: ctx.rotation.clone() });
            const got = resolve(q, cached, ctx);
            compared++;
            if (got.answers.length > 0 && Object.isFrozen(got.answers[0])) reused++;
            if (shape(got) !== shape(want)) {
              t.fail(
                `${view.description}, ${order}: ${name} ${type} for ${formatIp(client.address)}/${client.sourcePrefix}: cached ${shape(got)}, pipeline ${shape(want)}`,
              );
              return;
            }
          }
        }
      }
    }
    t.log(`${compared} answers compared, ${reused} served from the cache`);
    t.true(compared > 0);
  });
}

for (const scenario of scenarios()) {
  test(`answer classes decide as the location itself, with a scope never narrower, over the whole client mix (${scenario.name})`, (t) => {
    const geo = locationDb(scenario);
    const build = (db: LocationDb): Snapshot =>
      buildSnapshot(scenario.file, scenario.config, { geo: db, health: allUpHealthView, metrics: emptyMetricView }, NOW);
    const classes = build(geo);
    const plain = build(opaque(geo));
    const fresh = (): ResolveContext => ({ random: seededRandom(5), now: () => NOW, rotation: new RotationStore() });
    let compared = 0;
    for (const client of mix) {
      for (const { name, type } of questions(scenario.config)) {
        const q = { name, type, client, transport: 'udp' as const };
        const want = resolve(q, plain, fresh());
        const got = resolve(q, classes, fresh());
        compared++;
        const data = (a: Answer): string => a.answers.map((r) => presentData(r.type, r.data)).join();
        if (data(got) !== data(want) || got.rcode !== want.rcode || got.scope > want.scope) {
          t.fail(
            `${name} for ${formatIp(client.address)}/${client.sourcePrefix}: with answer classes ${data(got)} /${got.scope}, from the location itself ${data(want)} /${want.scope}`,
          );
          return;
        }
      }
    }
    t.true(compared > 0);
  });
}

/** Addresses of the IPv4-carrying IPv6 ranges (mapped, compatible, SIIT, NAT64, Teredo, 6to4). */
const IPV4_CARRIERS: readonly ((v4: number) => IpAddress)[] = [
  (v4) => parseIp(`::ffff:${formatIp(ipv4(v4))}`),
  (v4) => ipv6(0, 0, 0, v4 | 0x01000000),
  (v4) => ipv6(0, 0, 0xffff0000, v4),
  (v4) => ipv6(0x0064ff9b, 0, 0, v4),
  (v4) => ipv6(0x20010000, 0x12345678, 0, ~v4 >>> 0),
  (v4) => ipv6((0x20020000 | (v4 >>> 16)) >>> 0, (v4 << 16) >>> 0, 0, 1),
];

/** The words of `a` with its bits below `prefix` taken from `fill` (IPv6: four words). */
function inside(a: IpAddress, prefix: number, fill: readonly number[]): IpAddress {
  if (a.family === 4) return ipv4(((a.w0 & maskWord(prefix)) | (fill[0]! & ~maskWord(prefix))) >>> 0);
  const w = [a.w0, a.w1, a.w2, a.w3].map((x, i) => ((x & maskWord(prefix - 32 * i)) | (fill[i]! & ~maskWord(prefix - 32 * i))) >>> 0);
  return ipv6(w[0]!, w[1]!, w[2]!, w[3]!);
}

/** True when `b` lies in the /`prefix` block of IPv6 address `a` (the raw words; `b` may be folded IPv4-mapped). */
function inBlock(a: IpAddress, prefix: number, b: IpAddress): boolean {
  const bw = b.family === 4 ? [0, 0, 0xffff, b.w0] : [b.w0, b.w1, b.w2, b.w3];
  return [a.w0, a.w1, a.w2, a.w3].every((x, i) => ((x ^ bw[i]!) & maskWord(prefix - 32 * i)) === 0);
}

const SAMPLE_EVERY = 7;
const PROBES = 6;

for (const scenario of scenarios()) {
  test(`scope safety: random addresses inside each sampled answer's scope block get the same answer (${scenario.name})`, (t) => {
    const geo = locationDb(scenario);
    const snap = buildSnapshot(scenario.file, scenario.config, { geo, health: allUpHealthView, metrics: emptyMetricView }, NOW);
    const fresh = (): ResolveContext => ({ random: seededRandom(5), now: () => NOW, rotation: new RotationStore() });
    const probe = seededRandom(99);
    const asked = questions(scenario.config);
    let checked = 0;
    let crossFamily = 0;
    for (let i = 0; i < mix.length; i++) {
      if (i % SAMPLE_EVERY !== 0 && i < MIX_SIZE) continue;
      const client = mix[i]!;
      for (const { name, type } of asked) {
        const first = resolve({ name, type, client, transport: 'udp' }, snap, fresh());
        const candidates: IpAddress[] = [];
        for (let p = 0; p < PROBES; p++)
          candidates.push(
            inside(
              client.address,
              first.scope,
              [0, 1, 2, 3].map(() => Math.floor(probe() * 2 ** 32)),
            ),
          );
        if (client.address.family === 6) {
          const v4 = Math.floor(probe() * 2 ** 32);
          for (const carrier of IPV4_CARRIERS) {
            const a = carrier(v4);
            if (inBlock(client.address, first.scope, a)) candidates.push(a);
          }
        }
        for (const a of candidates) {
          const c: Client = { address: a, sourcePrefix: a.family === 4 ? 32 : 128, fromEcs: true };
          const other = resolve({ name, type, client: c, transport: 'udp' }, snap, fresh());
          checked++;
          if (a.family !== client.address.family) crossFamily++;
          const want = first.answers.map((r) => presentData(r.type, r.data)).join();
          const got = other.answers.map((r) => presentData(r.type, r.data)).join();
          if (want !== got || other.rcode !== first.rcode) {
            t.fail(
              `${name} for ${formatIp(client.address)}/${client.sourcePrefix} → ${want} scope /${first.scope}, but ${formatIp(a)}${a.mapped ? ' (IPv4-mapped)' : ''} inside it → ${got}`,
            );
            return;
          }
        }
      }
    }
    t.log(`${checked} addresses checked inside answered scopes (${crossFamily} IPv4-mapped)`);
    t.true(checked > 0);
  });
}
