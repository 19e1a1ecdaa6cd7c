import test from 'ava';
import { parseDottedLocation, qualifiersFromData } from '../../core/location/location.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { sharedLeading } from './proximityRanking.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

test('shared leading qualifiers: wildcards agree without counting, the first difference ends the walk', (t) => {
  const client = qualifiersFromData('Europe.UK.London.ISP1'.split('.'));
  const table: [string, number, boolean][] = [
    ['Europe.UK.*.*', 2, true],
    ['Europe.*.*.*', 1, true],
    ['*.UK', 1, true],
    ['NorthAmerica.US.CA.*', 0, false],
    ['*', 0, true],
    ['Europe.FR', 1, false],
    ['EU.GB.LONDON.ISP1', 4, true],
    ['Europe.UK.Leeds', 2, false],
  ];
  for (const [dc, shared, matches] of table) t.deepEqual(sharedLeading(client, parseDottedLocation(dc)), { shared, matches }, dc);
});

const SITES = `
${EXAMPLE_ZONE}
datacenters:
  - { name: s-eu, location: "Europe.*.*.*" }
  - { name: s-us, location: NorthAmerica.US.CA.*, lat: 37.4, lon: -122.1 }
  - { name: s-any }
  - { name: s-uk, location: Europe.UK.*.* }
services:
  - name: web
    endpoints:
      - { dc: s-eu, address: 192.0.2.1 }
      - { dc: s-us, address: 192.0.2.2 }
      - { dc: s-any, address: 192.0.2.3 }
      - { dc: s-uk, address: 192.0.2.4 }
records:
  - { name: www.example.test, type: A, service: web }
  - name: pref.example.test
    type: A
    service: web
    policies:
      rules:
        - { name: uk-first, when: { clientLocation: "Europe.*" }, action: uk-then-europe }
  - name: dflt.example.test
    type: A
    service: web
    policy: { type: static-proximity, default: [s-us] }
actions:
  - { name: uk-then-europe, type: preferred-locations, locations: ["*.UK.*.*", "Europe.*.*.*"] }
`;

const geo = prefixLocationDb([
  { cidr: '81.0.0.0/8', location: 'Europe.UK.London.ISP1' },
  { cidr: '126.0.0.0/8', location: 'Asia.JP', lat: 35.7, lon: 139.7 },
  { cidr: '62.0.0.0/16', location: '' },
]);

function dcsOf(name: string, client: string, down: string[] = [], n = 1): string[] {
  const snap = snapshotOf(SITES, geo, dcsDown(...down));
  const ctx = fixedContext();
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(...ask(snap, ctx, name, client).dcs);
  return out;
}

test('static proximity: most shared leading qualifiers wins, whatever the configuration order', (t) => {
  t.deepEqual(dcsOf('www.example.test', '81.1.1.1'), ['s-uk']);
  t.deepEqual(dcsOf('www.example.test', '81.1.1.1', ['s-uk']), ['s-eu']);
});

test('static proximity: a data center with no qualifiers counts as a match, above one that contradicts the client', (t) => {
  // Client in Asia.JP: no site shares a qualifier; s-us is nearer but contradicts the client.
  t.deepEqual(dcsOf('www.example.test', '126.1.1.1'), ['s-any']);
  t.deepEqual(dcsOf('www.example.test', '81.1.1.1', ['s-uk', 's-eu']), ['s-any']);
  t.deepEqual(dcsOf('www.example.test', '126.1.1.1', ['s-any']), ['s-us'], 'then the nearest of those that contradict');
});

test('preferred locations: the perfect match wins over an earlier-configured, less specific site', (t) => {
  t.deepEqual(dcsOf('pref.example.test', '81.1.1.1', [], 3), ['s-uk', 's-uk', 's-uk']);
  t.deepEqual(dcsOf('pref.example.test', '81.1.1.1', ['s-uk'], 2), ['s-eu', 's-eu']);
  t.deepEqual(dcsOf('pref.example.test', '81.1.1.1', ['s-uk', 's-eu'], 4), ['s-us', 's-any', 's-us', 's-any']);
});

test('unknown client location never picks a site because it is first in the configuration', (t) => {
  for (const client of ['10.1.1.1', '62.0.1.1']) {
    const got = dcsOf('www.example.test', client, [], 8);
    t.deepEqual([...got].sort(), ['s-any', 's-any', 's-eu', 's-eu', 's-uk', 's-uk', 's-us', 's-us'], client);
    t.deepEqual(dcsOf('pref.example.test', client, [], 4).length, 4, 'the policy does not hold: static proximity');
  }
  t.deepEqual(dcsOf('dflt.example.test', '10.1.1.1', [], 3), ['s-us', 's-us', 's-us'], 'the default data centers');
  t.deepEqual([...dcsOf('dflt.example.test', '10.1.1.1', ['s-us'], 3)].sort(), ['s-any', 's-eu', 's-uk'], 'default down: all up data centers');
});

test('ties on qualifiers go to the nearest data center by coordinates', (t) => {
  const cfg = `
${EXAMPLE_ZONE}
datacenters:
  - { name: frankfurt, location: Europe.DE, lat: 50.1, lon: 8.7 }
  - { name: london, location: Europe.UK, lat: 51.5, lon: -0.1 }
services:
  - name: web
    endpoints:
      - { dc: frankfurt, address: 192.0.2.1 }
      - { dc: london, address: 192.0.2.2 }
records:
  - { name: www.example.test, type: A, service: web }
`;
  const paris = prefixLocationDb([{ cidr: '90.0.0.0/8', location: 'Europe.FR', lat: 48.86, lon: 2.35 }]);
  const berlin = prefixLocationDb([{ cidr: '90.0.0.0/8', location: 'Europe.FR', lat: 52.5, lon: 13.4 }]);
  t.deepEqual(ask(snapshotOf(cfg, paris), fixedContext(), 'www.example.test', '90.1.1.1').dcs, ['london']);
  t.deepEqual(ask(snapshotOf(cfg, berlin), fixedContext(), 'www.example.test', '90.1.1.1').dcs, ['frankfurt']);
});
