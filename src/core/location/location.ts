import { CUSTOM_PREFIX, normaliseContinent, normaliseCountry, vocabularyProblem } from './qualifierVocabulary.js';

/**
 * The location model (docs/PRODUCT.md §4, after Citrix ADC's static proximity): six qualifiers,
 * `continent.country.region.city.isp.qualifier6`, compared case-insensitively after
 * normalisation. `''` is an unknown data field (it matches only `*`); `*` is a wildcard and appears
 * only in configured locations (data centers, policies, preferred locations), never in data.
 *
 * A dot inside a value (a city such as `St. Louis`) is written `\.` in dotted notation.
 */
export const QUALIFIER_COUNT = 6;

/** Six normalised qualifier values, continent first. */
export type Qualifiers = readonly [string, string, string, string, string, string];

/** A location: qualifiers plus optional coordinates (degrees) and autonomous system number. */
export interface Location {
  readonly qualifiers: Qualifiers;
  /** Latitude in degrees, −90…90; absent when unknown. */
  readonly lat?: number;
  /** Longitude in degrees, −180…180; absent when unknown. */
  readonly lon?: number;
  readonly asn?: number;
}

export const WILDCARD = '*';

/** The location of an address the data does not cover: every qualifier unknown. */
export const UNKNOWN_LOCATION: Location = { qualifiers: ['', '', '', '', '', ''] };

/** Normalises one qualifier value for position `index` (0 = continent, 1 = country, …). */
export function normaliseQualifier(index: number, value: string): string {
  const v = value.trim();
  if (v === '' || v === WILDCARD) return v;
  if (index === 0) return normaliseContinent(v);
  if (index === 1) return normaliseCountry(v);
  return v.toUpperCase();
}

/** Normalises six raw data fields (no wildcards in data: a literal `*` is kept as a value). */
export function qualifiersFromData(fields: readonly string[]): Qualifiers {
  const q: string[] = [];
  for (let i = 0; i < QUALIFIER_COUNT; i++) q.push(normaliseQualifier(i, fields[i] ?? ''));
  return q as unknown as Qualifiers;
}

/**
 * Parses a configured location in dotted notation, e.g. `Europe.UK`, `NA.US.*.*`, `*.ZMB.*.*`.
 * Fewer than six qualifiers mean trailing wildcards.
 * The continent and the country must be in a form the vocabulary recognises (`qualifierVocabulary.ts`:
 * `EU`, `Europe`, `DE`, `DEU`, `UK`); any qualifier written `custom:<value>` is taken as written.
 * @throws Error with the reason: more than six qualifiers, an empty qualifier (`Europe..London`),
 *   `*` used inside a name (`Eu*`), or a continent or country the vocabulary does not know, with
 *   the spelling to use (`Europe.Germany`: write EU.DE).
 */
export function parseDottedLocation(text: string): Qualifiers {
  const parts = splitDotted(text);
  if (parts.length > QUALIFIER_COUNT) {
    throw new Error(`has ${parts.length} qualifiers; a location has at most ${QUALIFIER_COUNT}`);
  }
  const out: string[] = [];
  for (let i = 0; i < QUALIFIER_COUNT; i++) {
    const raw = parts[i];
    if (raw === undefined) {
      out.push(WILDCARD);
      continue;
    }
    const v = raw.trim();
    if (v === '') throw new Error(`qualifier ${i + 1} is empty`);
    if (v !== WILDCARD && v.includes(WILDCARD)) {
      throw new Error(`qualifier ${i + 1} ("${v}") uses * inside a name; * must stand alone`);
    }
    if (v.toLowerCase().startsWith(CUSTOM_PREFIX)) {
      // Taken as written (compared upper-case, as data values outside the vocabulary are).
      const own = v.slice(CUSTOM_PREFIX.length).trim();
      if (own === '' || own === WILDCARD) throw new Error(`qualifier ${i + 1} ("${v}") has no value after "${CUSTOM_PREFIX}"`);
      out.push(own.toUpperCase());
      continue;
    }
    if ((i === 0 || i === 1) && v !== WILDCARD) {
      const problem = vocabularyProblem(i, v);
      if (problem) throw new Error(`qualifier ${i + 1}: ${problem}`);
    }
    out.push(normaliseQualifier(i, v));
  }
  return out as unknown as Qualifiers;
}

/** Dotted notation of qualifiers, trailing wildcards and unknowns dropped, dots inside values escaped. */
export function formatQualifiers(q: Qualifiers): string {
  let end = QUALIFIER_COUNT;
  while (end > 1 && (q[end - 1] === WILDCARD || q[end - 1] === '')) end--;
  return q
    .slice(0, end)
    .map((v) => v.replaceAll('.', '\\.'))
    .join('.');
}

function splitDotted(text: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '.') {
      cur += '.';
      i++;
    } else if (c === '.') {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

/**
 * Great-circle distance in km between two points given in degrees (haversine, mean Earth radius
 * 6371 km).
 */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(a)));
}
