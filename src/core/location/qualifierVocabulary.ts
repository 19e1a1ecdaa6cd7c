import { continents, countries, getCountryData } from 'countries-list';

/**
 * Normalisation of the first two location qualifiers through the `countries-list` dataset
 * (docs/PRODUCT.md §4): continent names and codes compare equal (`Europe` = `EU`, `North America` =
 * `NorthAmerica` = `NA`), ISO 3166-1 alpha-3 equals alpha-2 (`JPN` = `JP`), and `UK` = `GB`.
 * Everything is compared upper-case; values the dataset does not know are kept as written.
 */

const continentByName = new Map<string, string>();
for (const [code, name] of Object.entries(continents)) {
  continentByName.set(code, code);
  continentByName.set(name.toUpperCase(), code);
  continentByName.set(name.toUpperCase().replace(/\s+/g, ''), code);
}

const alpha2ByAlpha3 = new Map<string, string>();
for (const alpha2 of Object.keys(countries)) {
  const iso3 = getCountryData(alpha2 as keyof typeof countries).iso3;
  alpha2ByAlpha3.set(iso3.toUpperCase(), alpha2);
}

/** Canonical continent code (AF, AN, AS, EU, NA, OC, SA) for a code or English name, else the upper-cased input. */
export function normaliseContinent(value: string): string {
  const up = value.toUpperCase();
  return continentByName.get(up) ?? continentByName.get(up.replace(/[\s_-]+/g, '')) ?? up;
}

/** Canonical ISO 3166-1 alpha-2 code for an alpha-2 or alpha-3 code (`UK` → `GB`), else the upper-cased input. */
export function normaliseCountry(value: string): string {
  const up = value.toUpperCase();
  if (up === 'UK') return 'GB';
  if (up.length === 3) return alpha2ByAlpha3.get(up) ?? up;
  return up;
}

/** Upper-cased English country names, with and without spaces (`GERMANY`, `UNITEDSTATES`) → alpha-2: for suggestions only. */
const alpha2ByName = new Map<string, string>();
for (const [alpha2, c] of Object.entries(countries)) {
  alpha2ByName.set(c.name.toUpperCase(), alpha2);
  alpha2ByName.set(c.name.toUpperCase().replace(/[\s_-]+/g, ''), alpha2);
}

/** The prefix of a configured qualifier value taken as written, outside the vocabulary (`custom:Germany`). */
export const CUSTOM_PREFIX = 'custom:';

/**
 * Why a configured continent (`index` 0) or country (1) value is in no form the vocabulary
 * recognises, with the spelling to use; undefined when it is recognised. A country written by
 * name (`Europe.Germany`) would be kept as `GERMANY` and then match no location data, so the
 * location would match at continent level only; a value of the operator's own data is written
 * with {@link CUSTOM_PREFIX}.
 */
export function vocabularyProblem(index: 0 | 1, value: string): string | undefined {
  const up = value.toUpperCase();
  const compact = up.replace(/[\s_-]+/g, '');
  const own = `write ${CUSTOM_PREFIX}${value} for a value of your own location data`;
  if (index === 0) {
    if (continentByName.has(up) || continentByName.has(compact)) return undefined;
    const country = up in countries ? up : (alpha2ByAlpha3.get(up) ?? alpha2ByName.get(up) ?? alpha2ByName.get(compact));
    if (country) return `"${value}" is a country, not a continent: write ${continentOfCountry(country)}.${country}`;
    return `"${value}" is not a continent (AF, AN, AS, EU, NA, OC, SA or their English names); ${own}`;
  }
  if (up === 'UK' || up in countries || alpha2ByAlpha3.has(up)) return undefined;
  const named = alpha2ByName.get(up) ?? alpha2ByName.get(compact);
  if (named) return `"${value}" is not a country code: write ${continentOfCountry(named)}.${named}`;
  return `"${value}" is not an ISO 3166-1 country code (alpha-2 or alpha-3); ${own}`;
}

/** Continent code of an ISO alpha-2 country, or '' when the dataset does not know the country. */
export function continentOfCountry(alpha2: string): string {
  const entry = (countries as Record<string, { continent: string } | undefined>)[alpha2.toUpperCase()];
  return entry?.continent ?? '';
}
