import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ipLocationRecord, writeMmdb } from '../../../test/support/mmdbWriter.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { formatQualifiers } from '../../core/location/location.js';
import { loadLocationDb, sourcePath } from './loadSources.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import { locationFromRecord } from './mmdbSource.js';
import { unpackId, unpackPrefix } from '../../core/lpm/rangeTable.js';

/**
 * The MaxMind DB loader on small files generated at test time (test/support/mmdbWriter.ts):
 * networks arrive in order, nested networks override, equal neighbours merge, the IPv4 subtree of
 * an IPv6 file feeds the IPv4 table and its aliases are skipped.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-mmdb-'));
const config = join(dir, 'gslbd.yaml');
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

const amsterdam = ipLocationRecord('NL', 'Noord-Holland', 'Amsterdam', 52.3676, 4.9041);
const tokyo = ipLocationRecord('JP', 'Tokyo', 'Tokyo', 35.6895, 139.6917);
const ashburn = ipLocationRecord('US', 'Virginia', 'Ashburn', 39.0438, -77.4874);

writeMmdb(join(dir, 'v4.mmdb'), 4, [
  { cidr: '10.0.0.0/8', record: amsterdam },
  { cidr: '10.20.0.0/16', record: tokyo },
  { cidr: '10.20.30.0/24', record: ashburn },
  // Two halves of one /23 with the same record merge into one block.
  { cidr: '192.0.2.0/24', record: tokyo },
  { cidr: '192.0.3.0/24', record: tokyo },
]);
writeMmdb(join(dir, 'v6.mmdb'), 6, [
  { cidr: '2001:db8::/32', record: amsterdam },
  { cidr: '2001:db8:1::/48', record: tokyo },
  { cidr: '198.51.100.0/24', record: ashburn }, // IPv4 subtree ::/96
  { cidr: '2002:c633:6400::/40', record: tokyo }, // 6to4 alias of 198.51.100.0/24: skipped
]);
writeFileSync(join(dir, 'garbage.mmdb'), 'not a MaxMind DB');

function look(db: LocationDb, address: string): [string, number] {
  const packed = db.lookup(parseIp(address));
  const id = unpackId(packed);
  return [id === 0 ? 'unknown' : formatQualifiers(db.location(id).qualifiers), unpackPrefix(packed)];
}

const both = (): LocationDb =>
  loadLocationDb(
    [
      { format: 'mmdb', path: 'v4.mmdb' },
      { format: 'mmdb', path: 'v6.mmdb' },
    ],
    config,
  );

// address → location, prefix (after merging).
const lookups: [address: string, location: string, prefix: number][] = [
  ['10.20.30.5', 'NA.US.VIRGINIA.ASHBURN', 24],
  ['10.20.99.0', 'AS.JP.TOKYO.TOKYO', 18],
  ['10.20.0.0', 'AS.JP.TOKYO.TOKYO', 20],
  ['10.99.0.0', 'EU.NL.NOORD-HOLLAND.AMSTERDAM', 10],
  ['11.0.0.0', 'unknown', 8],
  ['192.0.3.200', 'AS.JP.TOKYO.TOKYO', 23],
  ['::ffff:10.20.30.5', 'NA.US.VIRGINIA.ASHBURN', 24], // mapped IPv6 is IPv4
  ['2001:db8::1', 'EU.NL.NOORD-HOLLAND.AMSTERDAM', 48], // beside the /48 of 2001:db8:1::
  ['2001:db8:8000::', 'EU.NL.NOORD-HOLLAND.AMSTERDAM', 33],
  ['2001:db8:1::99', 'AS.JP.TOKYO.TOKYO', 48],
  ['2002:c633:6400::1', 'unknown', 15], // the 6to4 alias is not loaded as IPv6 data: 2002::/15 is all unknown
  ['2001:db9::', 'unknown', 32],
];

for (const [address, location, prefix] of lookups) {
  test(`${address} → ${location} /${prefix}`, (t) => {
    t.deepEqual(look(both(), address), [location, prefix]);
  });
}

test('the IPv4 subtree of an IPv6 file feeds the IPv4 table', (t) => {
  const db = loadLocationDb([{ format: 'mmdb', path: 'v6.mmdb' }], config);
  t.deepEqual(look(db, '198.51.100.77'), ['NA.US.VIRGINIA.ASHBURN', 24]);
  t.deepEqual(look(db, '10.20.30.5'), ['unknown', 1]);
});

test('locations keep coordinates (rounded to 1e-4°) and continent from the country', (t) => {
  const db = both();
  const loc = db.location(unpackId(db.lookup(parseIp('10.1.1.1'))));
  t.deepEqual(loc, { qualifiers: ['EU', 'NL', 'NOORD-HOLLAND', 'AMSTERDAM', '', ''], lat: 52.3676, lon: 4.9041 });
});

test('describe() counts sources, locations and merged ranges', (t) => {
  const { implementation, ...counts } = both().describe();
  t.true(implementation === 'native' || implementation === 'typescript');
  t.deepEqual(counts, {
    sources: [join(dir, 'v4.mmdb'), join(dir, 'v6.mmdb')],
    locations: 4, // unknown + three cities
    // unknown | NL | JP | US | JP | NL | unknown | JP 192.0.2.0/23 | unknown | US 198.51.100.0/24 (IPv6 file) | unknown
    ipv4Ranges: 11,
    // unknown (::/96 went to IPv4) | NL | JP 2001:db8:1::/48 | NL | unknown
    ipv6Ranges: 5,
  });
});

test('a missing or invalid file names the source', (t) => {
  t.throws(() => loadLocationDb([{ format: 'mmdb', path: 'nope.mmdb' }], config), { message: /^location source \S*nope\.mmdb: ENOENT/ });
  t.throws(() => loadLocationDb([{ format: 'mmdb', path: 'garbage.mmdb' }], config), { message: /^location source \S*garbage\.mmdb: / });
});

test('a package source that is not installed says so', (t) => {
  t.throws(() => sourcePath({ format: 'mmdb', package: '@nope/missing/x.mmdb' }, config), {
    message: 'location source package file "@nope/missing/x.mmdb" is not installed (npm install)',
  });
  t.is(sourcePath({ format: 'mmdb', path: 'data/x.mmdb' }, config), join(dir, 'data/x.mmdb'));
});

test('MaxMind GeoIP2/GeoLite2 City records map onto the six qualifiers', (t) => {
  const loc = locationFromRecord({
    continent: { code: 'EU' },
    country: { iso_code: 'NL' },
    subdivisions: [{ iso_code: 'NH', names: { en: 'North Holland' } }],
    city: { names: { en: 'Amsterdam' } },
    location: { latitude: 52.37403, longitude: 4.88969 },
  });
  t.deepEqual(loc, { qualifiers: ['EU', 'NL', 'NH', 'AMSTERDAM', '', ''], lat: 52.374, lon: 4.8897 });
});

test('a record with only a registered country still gets a continent', (t) => {
  t.deepEqual(locationFromRecord({ registered_country: { iso_code: 'jp' } }), { qualifiers: ['AS', 'JP', '', '', '', ''] });
  t.deepEqual(locationFromRecord({}), { qualifiers: ['', '', '', '', '', ''] });
});
