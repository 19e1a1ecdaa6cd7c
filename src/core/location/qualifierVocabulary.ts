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

/** Continent code of an ISO alpha-2 country, or '' when the dataset does not know the country. */
export function continentOfCountry(alpha2: string): string {
  const entry = (countries as Record<string, { continent: string } | undefined>)[alpha2.toUpperCase()];
  return entry?.continent ?? '';
}
