import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { parseConfigText } from '../../src/process/loadConfig.js';
import { TYPE_CODES } from '../../src/core/dns/records.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { readImage } from '../../src/capabilities/geo/compiledImage.js';
import { formatIp, ipv4, ipv6, maskAddress, type IpAddress } from '../../src/core/net/ipAddress.js';
import type { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { allUpHealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { RotationStore } from '../../src/core/views/rotationStore.js';
import { resolve } from '../../src/pipeline/zones/authoritative.js';
import { seededRandom } from '../support/seededRandom.js';
import { repoRoot } from './cityImage.js';

/**
 * ECS scopes on a country-to-DC map, against an oracle that knows nothing of answer classes.
 *
 * The map is what an operator moving a gdnsd `nets` map or a country list writes: one static
 * rule per country of the GeoLite2-Country data, to the data center of the country's continent,
 * and a default data center for everything else (Antarctica, unknown networks). The oracle reads
 * the location table's raw ranges, turns each into its data center by the same map, and returns
 * the largest aligned block around the client in which every address gets the same data center —
 * the uniform block. The IPv4-mapped block counts as a different answer for IPv6 clients (it is
 * answered from the IPv4 table).
 *
 * Acceptance: gslbd's scope is never wider than the uniform block, and equal to it for at least
 * 99 % of 2,000 IPv4 /24 and 1,000 IPv6 /48 client networks drawn from real networks. Without
 * merging networks by decision, each country was a class of its own and neighbouring countries
 * of one continent never shared a block.
 */

const COUNTRY_IMAGE = join(repoRoot, '.tmp', 'geo', 'geolite2-country.gdb');
if (!existsSync(COUNTRY_IMAGE)) throw new Error(`${COUNTRY_IMAGE} is missing: run bash test/setup.sh (it compiles the GeoLite2-Country data)`);
const db = openLocationDb(readImage(readFileSync(COUNTRY_IMAGE)), 'typescript').db as RangeLocationDb;

const DC_OF_CONTINENT: Readonly<Record<string, string>> = { EU: 'eu', NA: 'na', SA: 'sa', AS: 'as', AF: 'af', OC: 'oc' };
const DEFAULT_DC = 'na';
const ADDRESS: Readonly<Record<string, string>> = { eu: '192.0.2.1', na: '192.0.2.2', sa: '192.0.2.3', as: '192.0.2.4', af: '192.0.2.5', oc: '192.0.2.6' };

/** Data center of a location id by the map (continent of the country; default otherwise). */
function dcOf(id: number): string {
  const q = db.location(id).qualifiers;
  return (q[1] !== '' && DC_OF_CONTINENT[q[0]!]) || DEFAULT_DC;
}

function countries(): Map<string, string> {
  const out = new Map<string, string>();
  for (let id = 1; id < db.table.size; id++) {
    const q = db.location(id).qualifiers;
    if (q[1] !== '' && DC_OF_CONTINENT[q[0]!]) out.set(q[1]!, DC_OF_CONTINENT[q[0]!]!);
  }
  return out;
}

function config(): string {
  const rules = [...countries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([cc, dc]) => `        - { when: { clientLocation: "*.${cc}" }, dcs: [${dc}] }`);
  return `
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
datacenters:
${Object.keys(ADDRESS)
  .map((dc) => `  - { name: ${dc} }`)
  .join('\n')}
services:
  - name: web
    endpoints:
${Object.entries(ADDRESS)
  .map(([dc, a]) => `      - { dc: ${dc}, address: ${a} }`)
  .join('\n')}
records:
  - name: www.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
${rules.join('\n')}
        - { dcs: [${DEFAULT_DC}] }
`;
}

/** Ranges of one family as [start, end, dc] with bigint bounds, neighbours of equal data center merged. */
function runs(family: 4 | 6): { starts: bigint[]; ends: bigint[]; dcs: string[] } {
  const t = family === 4 ? db.v4 : db.v6;
  const stride = family === 4 ? 1 : 4;
  const n = t.ids.length;
  const startOf = (i: number): bigint => {
    let v = 0n;
    for (let w = 0; w < stride; w++) v = (v << 32n) | BigInt(t.starts[i * stride + w]!);
    return v;
  };
  const max = family === 4 ? (1n << 32n) - 1n : (1n << 128n) - 1n;
  const out = { starts: [] as bigint[], ends: [] as bigint[], dcs: [] as string[] };
  for (let i = 0; i < n; i++) {
    const start = startOf(i);
    const end = i + 1 < n ? startOf(i + 1) - 1n : max;
    let dc = dcOf(t.ids[i]!);
    if (family === 6) {
      // ::ffff:0:0/96 is answered from the IPv4 table: a different answer for every IPv6 neighbour.
      const mapped = 0xffffn << 32n;
      if (start <= mapped + 0xffffffffn && end >= mapped) {
        if (start < mapped) push(out, start, mapped - 1n, dc);
        push(out, mapped, mapped + 0xffffffffn, 'ipv4-mapped');
        if (end > mapped + 0xffffffffn) push(out, mapped + 0x100000000n, end, dc);
        continue;
      }
    }
    push(out, start, end, dc);
  }
  return out;
}

function push(r: { starts: bigint[]; ends: bigint[]; dcs: string[] }, start: bigint, end: bigint, dc: string): void {
  const last = r.dcs.length - 1;
  if (last >= 0 && r.dcs[last] === dc && r.ends[last]! + 1n === start) {
    r.ends[last] = end;
    return;
  }
  r.starts.push(start);
  r.ends.push(end);
  r.dcs.push(dc);
}

/** Index of the run holding `a`. */
function runAt(r: { starts: bigint[] }, a: bigint): number {
  let lo = 0;
  let hi = r.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (r.starts[mid]! <= a) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Prefix length of the largest aligned block around `a` inside its run of equal data centers. */
function uniformPrefix(r: { starts: bigint[]; ends: bigint[] }, a: bigint, bits: number): number {
  const lo = runAt(r, a);
  for (let p = 0; p <= bits; p++) {
    const size = 1n << BigInt(bits - p);
    const blockStart = (a / size) * size;
    if (blockStart >= r.starts[lo]! && blockStart + size - 1n <= r.ends[lo]!) return p;
  }
  return bits;
}

function asBig(a: IpAddress): bigint {
  if (a.family === 4) return BigInt(a.w0);
  return (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n) | (BigInt(a.w2) << 32n) | BigInt(a.w3);
}

/** `n` client networks (/24 or /48) inside random ranges of the data that have a location. */
function clients(family: 4 | 6, n: number, seed: number): IpAddress[] {
  const random = seededRandom(seed);
  const t = family === 4 ? db.v4 : db.v6;
  const out: IpAddress[] = [];
  while (out.length < n) {
    const i = Math.floor(random() * t.ids.length);
    if (t.ids[i] === 0) continue;
    if (family === 4) {
      const start = t.starts[i]!;
      const end = i + 1 < t.ids.length ? t.starts[i + 1]! - 1 : 0xffffffff;
      out.push(maskAddress(ipv4(start + Math.floor(random() * (end - start + 1))), 24));
    } else {
      const a = ipv6(t.starts[i * 4]!, (t.starts[i * 4 + 1]! + Math.floor(random() * 0x10000)) >>> 0, 0, 0);
      if (Math.floor(db.lookup(a) / 256) !== t.ids[i]) continue;
      out.push(maskAddress(a, 48));
    }
  }
  return out;
}

const snapshot = buildSnapshot('<country map>', parseConfigText(config()), { geo: db, health: allUpHealthView, metrics: emptyMetricView }, Date.now());
const ctx = { random: seededRandom(1), now: () => Date.now(), rotation: new RotationStore() };

for (const [family, n, prefix] of [
  [4, 2000, 24],
  [6, 1000, 48],
] as const) {
  test(`IPv${family}: scope never wider than the uniform block, equal to it for ≥ 99 % of ${n} /${prefix} networks`, (t) => {
    const oracle = runs(family);
    const bits = family === 4 ? 32 : 128;
    let equal = 0;
    const narrower: string[] = [];
    for (const address of clients(family, n, family === 4 ? 404 : 606)) {
      const a = resolve(
        { name: 'www.example.test', type: TYPE_CODES.A, client: { address, sourcePrefix: prefix, fromEcs: true }, transport: 'udp' },
        snapshot,
        ctx,
      );
      const dc = a.dcs[0]!;
      const u = uniformPrefix(oracle, asBig(address), bits);
      if (dc !== oracle.dcs[runAt(oracle, asBig(address))]) {
        t.fail(`${formatIp(address)}: answered ${dc}, the map says ${oracle.dcs[runAt(oracle, asBig(address))]}`);
        return;
      }
      if (a.scope < u) {
        t.fail(`${formatIp(address)}/${prefix}: scope /${a.scope} is wider than the uniform block /${u} (answer ${dc})`);
        return;
      }
      if (a.scope === u) equal++;
      else narrower.push(`${formatIp(address)}/${prefix}: /${a.scope} vs uniform /${u}`);
    }
    t.log(`${equal} of ${n} equal to the uniform block; narrower: ${narrower.slice(0, 5).join('; ')}`);
    t.true(equal >= 0.99 * n, `${equal} of ${n} equal`);
  });
}
