import test from 'ava';
import { BucketRangeTable4 } from '../../core/lpm/bucketRangeTable.js';
import { opaque, prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { smallDbs } from '../../../test/geo/smallDb.js';
import { ask, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

const CONFIG = `
${EXAMPLE_ZONE}
datacenters:
  - { name: paris-dc, location: Europe.FR, lat: 48.9, lon: 2.4 }
  - { name: ny-dc, location: NorthAmerica.US, lat: 40.7, lon: -74.0 }
services:
  - name: web
    endpoints:
      - { dc: paris-dc, address: 192.0.2.1 }
      - { dc: ny-dc, address: 192.0.2.2 }
records:
  - { name: www.example.test, type: A, service: web }
  - { name: www2.example.test, type: A, service: web }
  - name: city.example.test
    type: A
    service: web
    policies:
      rules:
        - { name: paris-only, when: { clientLocation: Europe.FR.Paris }, action: to-ny }
actions:
  - { name: to-ny, type: view, dcs: [ny-dc] }
`;

// Paris and Lyon are different locations (different blocks) that rank the data centers alike.
const geo = prefixLocationDb([
  { cidr: '10.0.0.0/9', location: 'Europe.FR.Paris', lat: 48.86, lon: 2.35 },
  { cidr: '10.128.0.0/9', location: 'Europe.FR.Lyon', lat: 45.76, lon: 4.84 },
  { cidr: '11.0.0.0/8', location: 'NorthAmerica.US.NY', lat: 40.7, lon: -74.0 },
]);

function row(db: typeof geo | ReturnType<typeof opaque>, name: string, client: string): [string, number] {
  const a = ask(snapshotOf(CONFIG, db), fixedContext(), name, client);
  return [a.dcs.join(), a.scope];
}

test('answer classes: neighbouring locations with the same answer share one wider scope', (t) => {
  t.deepEqual(row(geo, 'www.example.test', '10.1.2.3'), ['paris-dc', 8], 'Paris and Lyon merge: 10.0.0.0/8');
  t.deepEqual(row(geo, 'www.example.test', '10.200.0.0/16'), ['paris-dc', 8]);
  t.deepEqual(row(geo, 'www.example.test', '11.1.1.1'), ['ny-dc', 8]);
  // Without answer classes (a database that cannot be enumerated) the scope is the location block.
  t.deepEqual(row(opaque(geo), 'www.example.test', '10.1.2.3'), ['paris-dc', 9]);
});

test('answer classes: a location pattern that tells the locations apart keeps them apart', (t) => {
  t.deepEqual(row(geo, 'city.example.test', '10.1.2.3'), ['ny-dc', 9]);
  t.deepEqual(row(geo, 'city.example.test', '10.200.0.0/16'), ['paris-dc', 9]);
});

test('answer classes are shared by records that read the location alike, and ignored on another database', (t) => {
  const snap = snapshotOf(CONFIG, geo);
  const [www, www2, city] = snap.records;
  t.truthy(www!.locationClasses);
  // A handful of classes: IPv4 in the bucket layout (ids beside the starts), one byte per IPv6 range.
  t.true(www!.locationClasses!.v4 instanceof BucketRangeTable4 && www!.locationClasses!.v6.ids instanceof Uint8Array);
  t.is(www!.locationClasses, www2!.locationClasses);
  t.not(www!.locationClasses, city!.locationClasses);
  // A snapshot whose location data was swapped without recompiling its records must not answer
  // from stale classes: the stages fall back to the location itself.
  const other = prefixLocationDb([{ cidr: '10.0.0.0/8', location: 'NorthAmerica.US', lat: 40.7, lon: -74.0 }]);
  const swapped = { ...snap, env: { ...snap.env, geo: other } };
  const a = ask(swapped, fixedContext(), 'www.example.test', '10.1.2.3');
  t.deepEqual([a.dcs, a.scope], [['ny-dc'], 8]);
});

test('/explain says how the scope was derived', (t) => {
  const a = ask(snapshotOf(CONFIG, geo), fixedContext(), 'www.example.test', '10.1.2.3', 'A', true);
  const steps = a.selections[0]!.steps;
  t.deepEqual(
    steps.filter((s) => s.stage === 'scope'),
    [
      {
        stage: 'scope',
        input: "answer class of the client's location (locations merged by identical decision for this record: 3 classes, 5 ranges)",
        representative: 'EU.FR.PARIS',
        prefix: 8,
        scopeSoFar: 8,
      },
    ],
  );
  t.like(
    steps.find((s) => s.stage === 'static-proximity'),
    {
      clientLocation: 'EU.FR.PARIS',
      dcs: [
        { dc: 'paris-dc', sharedQualifiers: 2, matches: true, km: 6 },
        { dc: 'ny-dc', sharedQualifiers: 0, matches: false, km: 5837 },
      ],
      groups: [['paris-dc'], ['ny-dc']],
    },
  );
});

test('answer classes over the native addon equal those over the TypeScript tables of the same image', (t) => {
  const { native, reference } = smallDbs(undefined, [
    { cidr: '10.0.0.0/9', location: 'Europe.FR.Paris', lat: 48.86, lon: 2.35 },
    { cidr: '10.128.0.0/9', location: 'Europe.FR.Lyon', lat: 45.76, lon: 4.84 },
    { cidr: '11.0.0.0/8', location: 'NorthAmerica.US.NY', lat: 40.7, lon: -74.0 },
    { cidr: '2001:db8::/32', location: 'Europe.FR.Paris', lat: 48.86, lon: 2.35 },
  ]);
  t.is(native.implementation, 'native');
  const rows = (db: typeof native): [string, string, number][] =>
    ['10.1.2.3', '10.200.0.0/16', '11.1.1.1', '12.0.0.0/8', '2001:db8:1::/48', '2001:db9::/32'].flatMap((client) =>
      ['www.example.test', 'city.example.test'].map((name): [string, string, number] => {
        const a = ask(snapshotOf(CONFIG, db), fixedContext(), name, client);
        return [`${name} ${client}`, a.dcs.join(), a.scope];
      }),
    );
  t.deepEqual(rows(native), rows(reference));
  t.deepEqual(rows(native).slice(0, 2), [
    ['www.example.test 10.1.2.3', 'paris-dc', 8],
    ['city.example.test 10.1.2.3', 'ny-dc', 9],
  ]);
});
