import test from 'ava';
import { distanceKm, formatQualifiers, normaliseQualifier, parseDottedLocation, qualifiersFromData, UNKNOWN_LOCATION } from './location.js';
import { continentOfCountry, normaliseContinent, normaliseCountry } from './qualifierVocabulary.js';

// written → normalised (docs/PRODUCT.md §4: continent names ↔ codes, alpha-3 ↔ alpha-2, UK = GB, any case).
const continents: [string, string][] = [
  ['Europe', 'EU'],
  ['europe', 'EU'],
  ['EU', 'EU'],
  ['eu', 'EU'],
  ['North America', 'NA'],
  ['north america', 'NA'],
  ['NorthAmerica', 'NA'],
  ['North_America', 'NA'],
  ['South America', 'SA'],
  ['Asia', 'AS'],
  ['Africa', 'AF'],
  ['Oceania', 'OC'],
  ['Antarctica', 'AN'],
  ['Atlantis', 'ATLANTIS'],
];
for (const [written, code] of continents) {
  test(`continent "${written}" = ${code}`, (t) => {
    t.is(normaliseContinent(written), code);
    t.is(normaliseQualifier(0, written), code);
  });
}

const countries: [string, string][] = [
  ['JPN', 'JP'],
  ['jpn', 'JP'],
  ['JP', 'JP'],
  ['ZMB', 'ZM'],
  ['zmb', 'ZM'],
  ['UK', 'GB'],
  ['uk', 'GB'],
  ['GBR', 'GB'],
  ['gb', 'GB'],
  ['NLD', 'NL'],
  ['USA', 'US'],
  ['XYZ', 'XYZ'],
  ['Narnia', 'NARNIA'],
];
for (const [written, code] of countries) {
  test(`country "${written}" = ${code}`, (t) => {
    t.is(normaliseCountry(written), code);
    t.is(normaliseQualifier(1, written), code);
  });
}

test('continent of a country comes from the dataset', (t) => {
  t.deepEqual(['NL', 'us', 'JP', 'ZM', 'BR', 'AU', 'AQ', 'ZZ', ''].map(continentOfCountry), ['EU', 'NA', 'AS', 'AF', 'SA', 'OC', 'AN', '', '']);
});

test('qualifiers after the country are upper-cased and trimmed only', (t) => {
  t.is(normaliseQualifier(2, ' Noord-Holland '), 'NOORD-HOLLAND');
  t.is(normaliseQualifier(3, 'St. Louis'), 'ST. LOUIS');
  t.is(normaliseQualifier(4, '*'), '*');
  t.is(normaliseQualifier(5, ''), '');
});

const dotted: [text: string, qualifiers: string[]][] = [
  ['Europe.UK', ['EU', 'GB', '*', '*', '*', '*']],
  ['NA.US.*.*', ['NA', 'US', '*', '*', '*', '*']],
  ['*.ZMB.*.*', ['*', 'ZM', '*', '*', '*', '*']],
  ['Asia.JPN.13.Tokyo.ISP1.org', ['AS', 'JP', '13', 'TOKYO', 'ISP1', 'ORG']],
  ['north america.us.va', ['NA', 'US', 'VA', '*', '*', '*']],
  ['NA.US.MO.St\\. Louis', ['NA', 'US', 'MO', 'ST. LOUIS', '*', '*']],
  ['*', ['*', '*', '*', '*', '*', '*']],
];
for (const [text, qualifiers] of dotted) {
  test(`parseDottedLocation("${text}")`, (t) => {
    t.deepEqual(parseDottedLocation(text), qualifiers);
  });
}

const badDotted: [text: string, message: string][] = [
  ['EU.NL.a.b.c.d.e', 'has 7 qualifiers; a location has at most 6'],
  ['Europe..London', 'qualifier 2 is empty'],
  ['', 'qualifier 1 is empty'],
  ['EU.NL.', 'qualifier 3 is empty'],
  ['Eu*.NL', 'qualifier 1 ("Eu*") uses * inside a name; * must stand alone'],
  ['EU.N*L', 'qualifier 2 ("N*L") uses * inside a name; * must stand alone'],
];
for (const [text, message] of badDotted) {
  test(`parseDottedLocation rejects "${text}"`, (t) => {
    t.throws(() => parseDottedLocation(text), { message });
  });
}

test('data fields keep a literal * as a value and empty fields as unknown', (t) => {
  t.deepEqual(qualifiersFromData(['Europe', 'nld', 'nh', 'Amsterdam']), ['EU', 'NL', 'NH', 'AMSTERDAM', '', '']);
  t.deepEqual(qualifiersFromData([]), UNKNOWN_LOCATION.qualifiers);
});

test('formatQualifiers drops trailing wildcards and unknowns and escapes dots', (t) => {
  t.is(formatQualifiers(['EU', 'GB', '*', '*', '*', '*']), 'EU.GB');
  t.is(formatQualifiers(['NA', 'US', 'MO', 'ST. LOUIS', '', '']), 'NA.US.MO.ST\\. LOUIS');
  t.is(formatQualifiers(['*', '*', '*', '*', '*', '*']), '*');
  t.is(formatQualifiers(['', 'JP', '', '', '', '']), '.JP');
  t.deepEqual(parseDottedLocation(formatQualifiers(['NA', 'US', 'MO', 'ST. LOUIS', '*', '*'])), ['NA', 'US', 'MO', 'ST. LOUIS', '*', '*']);
});

test('distanceKm is the great-circle distance (mean Earth radius 6371 km)', (t) => {
  t.is(distanceKm(0, 0, 0, 0), 0);
  t.is(Math.round(distanceKm(0, 0, 0, 90)), 10008); // a quarter of the equator
  t.is(Math.round(distanceKm(90, 0, -90, 0)), 20015); // pole to pole
  // Quickstart coordinates: Amsterdam-ish (eu-west) to Ashburn-ish (us-east).
  t.is(Math.round(distanceKm(52.4, 4.9, 39.0, -77.5)), 6211); // values from an independent haversine (Python)
  t.is(Math.round(distanceKm(35.7, 139.7, 52.4, 4.9)), 9285);
});

test('a continent or country the vocabulary does not know is an error with the spelling to use, at both positions', (t) => {
  const error = (text: string) => t.throws(() => parseDottedLocation(text))?.message;
  t.is(error('Europe.Germany'), 'qualifier 2: "Germany" is not a country code: write EU.DE');
  t.is(error('NA.United States'), 'qualifier 2: "United States" is not a country code: write NA.US');
  t.is(error('*.Japan.*.Tokyo'), 'qualifier 2: "Japan" is not a country code: write AS.JP');
  t.is(error('Germany'), 'qualifier 1: "Germany" is a country, not a continent: write EU.DE');
  t.is(error('DE.Berlin'), 'qualifier 1: "DE" is a country, not a continent: write EU.DE');
  t.is(
    error('Europa.DE'),
    'qualifier 1: "Europa" is not a continent (AF, AN, AS, EU, NA, OC, SA or their English names); write custom:Europa for a value of your own location data',
  );
  t.is(
    error('EU.Atlantis'),
    'qualifier 2: "Atlantis" is not an ISO 3166-1 country code (alpha-2 or alpha-3); write custom:Atlantis for a value of your own location data',
  );
  t.is(error('EU.custom:'), 'qualifier 2 ("custom:") has no value after "custom:"');
});

test('the seed spellings stay valid, and custom: takes any value as written (upper-cased like data values)', (t) => {
  t.deepEqual(parseDottedLocation('Asia.jpn'), ['AS', 'JP', '*', '*', '*', '*']);
  t.deepEqual(parseDottedLocation('Africa.zmb'), ['AF', 'ZM', '*', '*', '*', '*']);
  t.deepEqual(parseDottedLocation('Europe.UK'), ['EU', 'GB', '*', '*', '*', '*']);
  t.deepEqual(parseDottedLocation('North America.US.*.Ashburn'), ['NA', 'US', '*', 'ASHBURN', '*', '*']);
  t.deepEqual(parseDottedLocation('Europe.custom:Germany'), ['EU', 'GERMANY', '*', '*', '*', '*']);
  t.deepEqual(parseDottedLocation('custom:Mars.custom:Olympus'), ['MARS', 'OLYMPUS', '*', '*', '*', '*']);
  t.deepEqual(parseDottedLocation('*.*.custom:anything'), ['*', '*', 'ANYTHING', '*', '*', '*']);
});
