import test from 'ava';
import { join } from 'node:path';
import { geoSchema } from '../../src/capabilities/geo/geoSchema.js';
import { buildLocationImage } from '../../src/capabilities/geo/buildImage.js';
import { readImage } from '../../src/capabilities/geo/compiledImage.js';
import { SourceLineError } from '../../src/capabilities/geo/delimitedFile.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { parseIp } from '../../src/core/net/ipAddress.js';
import { unpackId, unpackPrefix } from '../../src/core/lpm/rangeTable.js';
import { repoRoot } from './cityImage.js';

const fixture = (name: string): string => join(repoRoot, 'test', 'fixtures', 'geo', name);

function build(sources: unknown[], extra: Record<string, unknown> = {}) {
  const geo = geoSchema.parse({ sources, ...extra });
  const built = buildLocationImage({ sources: geo.sources, custom: geo.custom, mode: geo.mode, resolvePath: (s) => fixture(s.path!) });
  const db = openLocationDb(readImage(built.image), 'native').db;
  const look = (address: string) => {
    const packed = db.lookup(parseIp(address));
    return { ...db.location(unpackId(packed)), prefix: unpackPrefix(packed) };
  };
  return { built, db, look };
}

test('NetScaler file: dotted and numeric addresses, longitude before latitude, tags and comments', (t) => {
  const { look, built } = build([{ format: 'netscaler', path: 'netscaler.csv' }]);
  t.deepEqual(look('10.0.0.1'), { qualifiers: ['EU', 'NL', 'NORTH HOLLAND', 'AMSTERDAM', 'EXAMPLENET', ''], lat: 52.3702, lon: 4.8952, prefix: 16 });
  // 167837952 = 10.1.1.0: a numeric row nested inside 10.1.0.0/16 wins there.
  t.deepEqual(look('10.1.1.9'), { qualifiers: ['NA', 'US', 'NY', 'NEW YORK', '', ''], lat: 40.7128, lon: -74.006, prefix: 24 });
  // Empty continent derived from the country; quoted field with a comma and a dot.
  t.deepEqual(look('10.1.0.9'), { qualifiers: ['NA', 'US', 'CA', 'SAN JOSE', '', ''], lat: 37.3382, lon: -121.8863, prefix: 24 });
  t.deepEqual(look('192.0.2.1'), { qualifiers: ['AS', 'JP', '', 'ST. LOUIS, TOKYO', '', ''], prefix: 24 });
  t.deepEqual(look('11.0.0.1'), { qualifiers: ['', '', '', '', '', ''], prefix: 8 });
  t.is(built.skipped.count, 0);
});

test('NetScaler file, strict: the first bad line fails the load with file:line', (t) => {
  const e = t.throws(() => build([{ format: 'netscaler', path: 'netscaler-malformed.csv' }]));
  t.is(
    e?.message,
    `location source ${fixture('netscaler-malformed.csv')}: ${fixture('netscaler-malformed.csv')}:3: expected from,to,continent,country,region,city,isp,org,longitude,latitude (trailing qualifiers and the coordinates may be left out); found 9 fields`,
  );
  t.true(e?.cause instanceof SourceLineError);
  t.is((e?.cause as SourceLineError | undefined)?.line, 3);
});

test('NetScaler file, lenient: bad lines are skipped, counted and listed', (t) => {
  const { look, built } = build([{ format: 'netscaler', path: 'netscaler-malformed.csv' }], { mode: 'lenient' });
  const f = fixture('netscaler-malformed.csv');
  t.is(built.skipped.count, 4);
  t.deepEqual(built.skipped.first, [
    `${f}:3: expected from,to,continent,country,region,city,isp,org,longitude,latitude (trailing qualifiers and the coordinates may be left out); found 9 fields`,
    `${f}:4: range end 10.0.1.0 is below its start 10.0.2.0`,
    `${f}:5: latitude "152.4" is not a number in −90…90`,
    `${f}:6: "banana" is not an address (dotted IPv4, IPv6 or a decimal number)`,
  ]);
  t.is(look('10.0.0.1').qualifiers[1], 'NL');
  t.is(look('10.0.1.1').qualifiers[1], '');
  t.is(look('10.0.5.1').qualifiers[1], 'NL');
});

test('ip-location-db country file, text and numeric forms, both families', (t) => {
  for (const path of ['ip-location-db-country.csv', 'ip-location-db-country-ipv4-num.csv']) {
    const { look } = build([{ format: 'ip-location-db-country', path }]);
    t.deepEqual(look('1.0.0.7'), { qualifiers: ['OC', 'AU', '', '', '', ''], prefix: 24 }, path);
    t.deepEqual(look('1.0.2.7'), { qualifiers: ['AS', 'CN', '', '', '', ''], prefix: 23 }, path);
  }
  const { look } = build([{ format: 'ip-location-db-country', path: 'ip-location-db-country.csv' }]);
  t.deepEqual(look('2001:200::1'), { qualifiers: ['AS', 'JP', '', '', '', ''], prefix: 32 });
});

test('ip-location-db city file: state1 is the region, coordinates kept', (t) => {
  const { look } = build([{ format: 'ip-location-db-city', path: 'ip-location-db-city.csv' }]);
  t.deepEqual(look('1.0.0.1'), { qualifiers: ['OC', 'AU', 'QUEENSLAND', 'SOUTH BRISBANE', '', ''], lat: -27.4766, lon: 153.0166, prefix: 24 });
  t.deepEqual(look('2001:200:1::'), { qualifiers: ['AS', 'JP', 'TOKYO', 'CHIYODA, TOKYO', '', ''], lat: 35.6893, lon: 139.6899, prefix: 32 });
});

test('ASN overlay sets ISP, AS<number> and the ASN over the city data, splitting ranges where needed', (t) => {
  const { look, db } = build([
    { format: 'ip-location-db-city', path: 'ip-location-db-city.csv' },
    { format: 'ip-location-db-asn', path: 'ip-location-db-asn.csv' },
  ]);
  t.deepEqual(look('1.0.0.1'), {
    qualifiers: ['OC', 'AU', 'QUEENSLAND', 'SOUTH BRISBANE', 'CLOUDFLARE, INC.', 'AS13335'],
    lat: -27.4766,
    lon: 153.0166,
    asn: 13335,
    prefix: 24,
  });
  // 1.0.1.0–1.0.3.255 is one city range; the ASN covers only 1.0.2.0/24 of it.
  t.deepEqual(look('1.0.1.1'), { qualifiers: ['AS', 'CN', 'FUJIAN', 'FUZHOU', '', ''], lat: 26.0614, lon: 119.3061, prefix: 24 });
  t.deepEqual(look('1.0.2.1'), { qualifiers: ['AS', 'CN', 'FUJIAN', 'FUZHOU', 'CHINANET', 'AS4134'], lat: 26.0614, lon: 119.3061, asn: 4134, prefix: 24 });
  t.is(look('1.0.3.1').asn, undefined);
  // ASN data where the city file has none: unknown geography, known network.
  t.deepEqual(look('9.9.9.9'), { qualifiers: ['', '', '', '', 'QUAD9', 'AS19281'], asn: 19281, prefix: 24 });
  t.is(look('2001:200::1').asn, 2500);
  t.true(db.describe().sources.length === 2);
});

test('ip-location-db, strict and lenient: malformed CSV quoting, bad country codes, short rows', (t) => {
  const f = fixture('ip-location-db-country-malformed.csv');
  const strict = t.throws(() => build([{ format: 'ip-location-db-country', path: 'ip-location-db-country-malformed.csv' }]));
  t.is(strict?.message, `location source ${f}: ${f}:2: country code "CNN" is not ISO 3166-1 alpha-2`);
  const { built, look } = build([{ format: 'ip-location-db-country', path: 'ip-location-db-country-malformed.csv' }], { mode: 'lenient' });
  t.is(built.skipped.count, 3);
  t.is(built.skipped.first[0], `${f}:2: country code "CNN" is not ISO 3166-1 alpha-2`);
  t.is(built.skipped.first[1], `${f}:3: expected 3 fields for an ip-location-db country file; found 2`);
  t.regex(built.skipped.first[2]!, new RegExp(`^${f.replaceAll('.', '\\.')}:4: .*quote`, 'i'));
  t.is(look('1.0.0.1').qualifiers[1], 'AU');
});

test('later location sources replace earlier ones where they have data', (t) => {
  const { look } = build([
    { format: 'ip-location-db-city', path: 'ip-location-db-city.csv' },
    { format: 'ip-location-db-country', path: 'ip-location-db-country-ipv4-num.csv' },
  ]);
  t.deepEqual(look('1.0.0.1'), { qualifiers: ['OC', 'AU', '', '', '', ''], prefix: 24 });
  t.is(look('8.8.8.8').qualifiers[1], 'US');
});

test('a missing source file names the source', (t) => {
  const e = t.throws(() => build([{ format: 'netscaler', path: 'nope.csv' }]));
  t.regex(e!.message, /^location source .*nope\.csv: ENOENT/);
});
