import test from 'ava';
import type { DerivedTableStore, LocationDb } from '../../core/location/locationDb.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { ask, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';
import { decodeClassesSteps, encodeClasses, type StoredClasses } from './answerClassesStore.js';
import { runSteps } from './steps.js';

const decodeClasses = (bytes: Uint8Array, locationCount: number): StoredClasses | undefined => runSteps(decodeClassesSteps(bytes, locationCount));

/**
 * Answer classes kept in a location database's store of derived tables (issue 26, sub-second
 * start): a second load of the same data reads them instead of building (it decodes only the
 * classes' representatives, not every location), answers alike, and any change of what they are
 * computed from builds them again — never stale.
 */

const config = (parisLon: number, fallback: string): string => `
${EXAMPLE_ZONE}
datacenters:
  - { name: paris-dc, location: Europe.FR, lat: 48.9, lon: ${parisLon} }
  - { name: ny-dc, location: NorthAmerica.US, lat: 40.7, lon: -74.0 }
services:
  - name: web
    endpoints:
      - { dc: paris-dc, address: 192.0.2.1 }
      - { dc: ny-dc, address: 192.0.2.2 }
records:
  - { name: www.example.test, type: A, service: web, policy: { type: static-proximity, pickDcCount: 1, default: [${fallback}] } }
`;

const ENTRIES = [
  { cidr: '10.0.0.0/9', location: 'Europe.FR.Paris', lat: 48.86, lon: 2.35 },
  { cidr: '10.128.0.0/9', location: 'Europe.FR.Lyon', lat: 45.76, lon: 4.84 },
  { cidr: '11.0.0.0/8', location: 'NorthAmerica.US.NY', lat: 40.7, lon: -74.0 },
  { cidr: '12.0.0.0/8', location: 'Asia.JP.Tokyo', lat: 35.7, lon: 139.7 },
  { cidr: '2001:db8::/32', location: 'Europe.DE.Berlin', lat: 52.5, lon: 13.4 },
];

/** An in-memory store, counting writes. */
function memoryStore(): DerivedTableStore & { entries: Map<string, Uint8Array>; writes: number } {
  const entries = new Map<string, Uint8Array>();
  return {
    entries,
    writes: 0,
    read: (key) => entries.get(key),
    write(key, bytes) {
      this.writes++;
      entries.set(key, bytes);
    },
  };
}

/** A fresh database over the same data (as a restart opens), on `store`, counting decoded locations. */
function loaded(store: DerivedTableStore): { db: LocationDb; decoded: () => number } {
  const db: LocationDb = prefixLocationDb(ENTRIES);
  let decoded = 0;
  const tilings = db.tilings!.bind(db);
  db.tilings = () => {
    const t = tilings();
    return { ...t, decode: (id: number) => (decoded++, t.decode(id)) };
  };
  db.derivedTables = store;
  return { db, decoded: () => decoded };
}

const CLIENTS = ['10.1.2.3', '10.200.0.0/16', '11.1.1.1', '12.0.0.1', '2001:db8::1', '9.9.9.9', '2001:db9::1'];
const answers = (yaml: string, db: LocationDb): [string, string, number][] =>
  CLIENTS.map((c) => {
    const a = ask(snapshotOf(yaml, db), fixedContext(), 'www.example.test', c);
    return [c, a.dcs.join(), a.scope];
  });

test('a second load reads the stored classes instead of building them, and answers alike', (t) => {
  const store = memoryStore();
  const first = loaded(store);
  const built = answers(config(2.4, 'ny-dc'), first.db);
  t.is(store.writes, 1);
  t.true(first.decoded() >= ENTRIES.length, 'the build decodes every location');
  const second = loaded(store);
  t.deepEqual(answers(config(2.4, 'ny-dc'), second.db), built);
  t.is(store.writes, 1, 'nothing built again');
  t.true(second.decoded() < first.decoded(), `${second.decoded()} locations decoded, against ${first.decoded()} to build`);
  // Not vacuous: the data decides.
  t.deepEqual(built.slice(0, 3), [
    ['10.1.2.3', 'paris-dc', 8],
    ['10.200.0.0/16', 'paris-dc', 8],
    ['11.1.1.1', 'ny-dc', 8],
  ]);
});

test('a change of what the classes are computed from builds them again (a policy default, a data center coordinate)', (t) => {
  const store = memoryStore();
  answers(config(2.4, 'ny-dc'), loaded(store).db);
  const changedDefault = loaded(store);
  const withParisDefault = answers(config(2.4, 'paris-dc'), changedDefault.db);
  t.is(store.writes, 2);
  t.deepEqual(
    withParisDefault.find(([c]) => c === '9.9.9.9'),
    ['9.9.9.9', 'paris-dc', withParisDefault.find(([c]) => c === '9.9.9.9')![2]],
  );
  // Paris moved next to Tokyo: Tokyo's clients now go to paris-dc, which the stored tables of the first configuration would not say.
  const moved = loaded(store);
  const tokyo = answers(config(139, 'ny-dc'), moved.db).find(([c]) => c === '12.0.0.1');
  t.is(store.writes, 3);
  t.is(tokyo![1], 'paris-dc');
  t.deepEqual(answers(config(139, 'ny-dc'), prefixLocationDb(ENTRIES)), answers(config(139, 'ny-dc'), loaded(store).db), 'stored equals built');
});

test('stored bytes that do not decode are built again, never served', (t) => {
  const store = memoryStore();
  const built = answers(config(2.4, 'ny-dc'), loaded(store).db);
  const [key, bytes] = [...store.entries][0]!;
  for (const damaged of [bytes.subarray(0, bytes.length - 4), new Uint8Array(bytes.length), Uint8Array.from(bytes).fill(0xff, 20, 24)]) {
    store.entries.set(key, damaged);
    const again = loaded(store);
    t.deepEqual(answers(config(2.4, 'ny-dc'), again.db), built);
    t.notDeepEqual(store.entries.get(key), damaged, 'rewritten');
  }
});

test('the stored form round-trips and rejects what is not its own', (t) => {
  const stored = {
    representatives: Uint32Array.from([0, 3]),
    v4: { starts: Uint32Array.from([0, 0x0a000000]), ids: Uint32Array.from([0, 1]) },
    v6: { starts: Uint32Array.from([0, 0, 0, 0]), ids: Uint32Array.from([1]) },
  };
  t.deepEqual(decodeClasses(encodeClasses(stored), 4), stored);
  t.is(decodeClasses(encodeClasses(stored), 3), undefined, 'a representative beyond the database');
  t.is(
    decodeClasses(encodeClasses({ ...stored, v4: { starts: Uint32Array.from([5, 1]), ids: Uint32Array.from([0, 1]) } }), 4),
    undefined,
    'starts not ascending',
  );
  t.is(decodeClasses(encodeClasses({ ...stored, v6: { ...stored.v6, ids: Uint32Array.from([2]) } }), 4), undefined, 'a class beyond the classes');
});

test('large stored tables are checked in steps, and a fault beyond the first step is still found', (t) => {
  // The city data's tables are 1-1.4 million words per record; checked in one go they held a
  // location reload's event loop 68-116 ms (issue 17).
  const n4 = 300_000;
  const n6 = 50_000;
  const stored = {
    representatives: Uint32Array.from([0, 1, 2]),
    v4: { starts: Uint32Array.from({ length: n4 }, (_, i) => i * 16), ids: Uint32Array.from({ length: n4 }, (_, i) => i % 3) },
    v6: { starts: Uint32Array.from({ length: 4 * n6 }, (_, i) => (i % 4 === 0 ? i : 0)), ids: Uint32Array.from({ length: n6 }, (_, i) => i % 3) },
  };
  const bytes = encodeClasses(stored);
  const steps = decodeClassesSteps(bytes, 3);
  let yields = 0;
  let next = steps.next();
  for (; !next.done; next = steps.next()) yields++;
  t.deepEqual(next.value, stored);
  // 750,000 words in steps of 65,536, checked by range kind.
  t.true(yields >= 12, `${yields} steps`);
  const late = Uint32Array.from(stored.v6.starts);
  late[4 * (n6 - 1)] = 0;
  t.is(decodeClasses(encodeClasses({ ...stored, v6: { ...stored.v6, starts: late } }), 3), undefined, 'the last IPv6 start not ascending');
});
