import test from 'ava';
import fc from 'fast-check';
import { formatIp, ipv4, maskWord } from '../../core/net/ipAddress.js';
import { opaque, prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

/**
 * The ECS scope is never wrong (docs/PRODUCT.md §8): for random location maps, random DNS policies (subnet
 * and location conditions, both overlap rules, views and preferred locations) and random
 * clients and health states, every address inside the block the answer's scope names gets the
 * same answer, and every client gets data (a GSLB name never changes existence by client). The
 * answer classes precomputed at load decide exactly as the per-query ranking does, with a scope
 * never longer than the location block's.
 * pickDcCount covers every data center and balance is `all`, so an answer shows the whole ranking.
 */

const LOCATIONS = ['Asia.IN', 'Europe.GB', 'NorthAmerica.US', 'Africa.ZMB', 'Europe.FR'];
const PATTERNS = ['Asia', '*.GB', 'Europe', 'NA.US', '*.ZMB.*.*'];

const prefixIn10 = fc.record({ offset: fc.integer({ min: 0, max: 0xffffff }), len: fc.integer({ min: 9, max: 30 }) }).map(({ offset, len }) => {
  const start = ((10 << 24) | offset) & maskWord(len);
  return `${formatIp(ipv4(start))}/${len}`;
});

const condition = fc.oneof(
  fc.array(prefixIn10, { minLength: 1, maxLength: 3 }).map((subnets) => `{ clientSubnet: [${subnets.join(', ')}] }`),
  fc.constantFrom(...PATTERNS).map((p) => `{ clientLocation: "${p}" }`),
  fc.tuple(prefixIn10, fc.constantFrom(...PATTERNS)).map(([s, p]) => `{ any: [{ clientSubnet: [${s}] }, { not: { clientLocation: "${p}" } }] }`),
);

const scenario = fc.record({
  entries: fc.uniqueArray(fc.record({ cidr: prefixIn10, location: fc.constantFrom(...LOCATIONS) }), { maxLength: 6, selector: (e) => e.cidr }),
  rules: fc.array(fc.record({ when: condition, action: fc.constantFrom('view-a', 'view-bc', 'prefer') }), { maxLength: 3 }),
  overlap: fc.constantFrom('first', 'most-specific'),
  client: fc.integer({ min: 0, max: 0xffffff }),
  source: fc.integer({ min: 8, max: 32 }),
  samples: fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 8, maxLength: 8 }),
  down: fc.subarray(['a', 'b', 'c', 'd', 'e']),
});

function config(rules: { when: string; action: string }[], overlap: string): string {
  return `
${EXAMPLE_ZONE}
datacenters:
  - { name: a, location: Asia.IN, lat: 28.6, lon: 77.2 }
  - { name: b, location: Europe.UK, lat: 51.5, lon: -0.1 }
  - { name: c, location: NorthAmerica.US }
  - { name: d, location: Africa.ZMB }
  - { name: e }
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1 }
      - { dc: b, address: 192.0.2.2 }
      - { dc: c, address: 192.0.2.3 }
      - { dc: d, address: 192.0.2.4 }
      - { dc: e, address: 192.0.2.5 }
records:
  - name: www.example.test
    type: A
    service: web
    policy: { type: static-proximity, pickDcCount: 5, balanceAlgorithm: all }
    health: { allDown: fail-closed }
actions:
  - { name: view-a, type: view, dcs: [a] }
  - { name: view-bc, type: view, dcs: [[b, c]] }
  - { name: prefer, type: preferred-locations, locations: ["*.GB", "NA.US.CA", "Asia"] }
${rules.length > 0 ? `policies:\n  subnetOverlap: ${overlap}\n  rules:\n${rules.map((r, i) => `    - { name: p${i}, when: ${r.when}, action: ${r.action} }`).join('\n')}` : ''}
`;
}

test('every address inside the answered scope gets the same answer', (t) => {
  fc.assert(
    fc.property(scenario, ({ entries, rules, overlap, client, source, samples, down }) => {
      const snap = snapshotOf(config(rules, overlap), prefixLocationDb(entries), dcsDown(...down));
      const address = ((10 << 24) | client) & maskWord(source);
      const first = ask(snap, fixedContext(), 'www.example.test', `${formatIp(ipv4(address))}/${source}`);
      // The same decision without answer classes (per-query ranking, location block as scope).
      const direct = ask(
        snapshotOf(config(rules, overlap), opaque(prefixLocationDb(entries)), dcsDown(...down)),
        fixedContext(),
        'www.example.test',
        `${formatIp(ipv4(address))}/${source}`,
      );
      if (direct.data.join() !== first.data.join() || direct.scope < first.scope) {
        throw new Error(
          `${formatIp(ipv4(address))}/${source}: answer classes give ${first.data.join()} /${first.scope}, per-query ranking ${direct.data.join()} /${direct.scope}`,
        );
      }
      for (const sample of samples) {
        const inside = ((address & maskWord(first.scope)) | (sample & ~maskWord(first.scope))) >>> 0;
        const other = ask(snap, fixedContext(), 'www.example.test', formatIp(ipv4(inside)));
        // fail-closed: NODATA only when every data center is down, and then for every client.
        if ((other.data.length === 0) !== (down.length === 5))
          throw new Error(`${formatIp(ipv4(inside))}: ${other.data.length} records with ${down.length} of 5 data centers down`);
        if (other.data.join() !== first.data.join()) {
          throw new Error(
            `${formatIp(ipv4(address))}/${source} -> ${first.data.join()} scope ${first.scope}, but ${formatIp(ipv4(inside))} -> ${other.data.join()}`,
          );
        }
      }
    }),
    { numRuns: 200, seed: 20260617 },
  );
  t.pass();
});
