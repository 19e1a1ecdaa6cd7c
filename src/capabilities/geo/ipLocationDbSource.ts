import { z } from 'zod';
import { parseCoordinate, parseRangeFields, readDelimitedFile, type LoadMode, type SkippedLines } from './delimitedFile.js';
import { qualifiersFromData, type Location } from '../../core/location/location.js';
import type { LocationTable } from './locationTable.js';
import type { FamilyTilings } from './locationFormat.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { resolveEntries, type Family, type RangeEntry } from '../../core/lpm/tiling.js';

/**
 * What the three ip-location-db formats share (`ipLocationDbCountrySource.ts`,
 * `ipLocationDbCitySource.ts`, `ipLocationDbAsnSource.ts`). The files (github.com/sapics/ip-location-db;
 * npm `@ip-location-db/*`) have no header, inclusive ranges, addresses as text or as decimal
 * numbers (the `-num.csv` variants; set `ipVersion: 6` for IPv6 numeric files).
 *
 * - country: `ip_range_start,ip_range_end,country_code`
 * - city: `ip_range_start,ip_range_end,country_code,state1,state2,city,postcode,latitude,longitude,timezone`
 *   (state1 → region, as the mmdb loader does; the continent is derived from the country)
 * - asn: `ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization`
 */
export type IpLocationDbVariant = 'country' | 'city';

/**
 * The option of the three ip-location-db formats: `ipVersion` says how to read purely numeric
 * addresses (default: IPv4 below 2^32). One schema object, so the merged source schema has one
 * `ipVersion` key.
 */
export const ipVersionOption = {
  ipVersion: z
    .union([z.literal(4), z.literal(6)])
    .optional()
    .describe('ip-location-db formats: read purely numeric addresses as IPv4 (4) or IPv6 (6); default IPv4 below 2^32.'),
};

/**
 * Loads a country or city file as a location source.
 * @throws SourceLineError (`file:line: reason`) in strict mode; Error when the file is unreadable.
 */
export function loadIpLocationDb(
  file: string,
  variant: IpLocationDbVariant,
  numericFamily: Family | undefined,
  table: LocationTable,
  mode: LoadMode,
  skipped: SkippedLines,
): FamilyTilings {
  const entries: Record<Family, RangeEntry[]> = { 4: [], 6: [] };
  const fields = variant === 'country' ? 3 : 10;
  readDelimitedFile(file, mode, skipped, (f) => {
    if (f.length !== fields) throw new Error(`expected ${fields} fields for an ip-location-db ${variant} file; found ${f.length}`);
    const { family, start, end } = parseRangeFields(f[0]!, f[1]!, numericFamily);
    const country = f[2]!.toUpperCase();
    if (country !== '' && !/^[A-Z]{2}$/.test(country)) throw new Error(`country code "${f[2]}" is not ISO 3166-1 alpha-2`);
    const location: { -readonly [K in keyof Location]: Location[K] } = {
      qualifiers: qualifiersFromData(variant === 'country' ? [continentOfCountry(country), country] : [continentOfCountry(country), country, f[3]!, f[5]!]),
    };
    if (variant === 'city') {
      const lat = parseCoordinate(f[7]!, 'latitude', 90);
      const lon = parseCoordinate(f[8]!, 'longitude', 180);
      if (lat !== undefined && lon !== undefined) {
        location.lat = Math.round(lat * 1e4) / 1e4;
        location.lon = Math.round(lon * 1e4) / 1e4;
      }
    }
    entries[family].push({ start, end, value: table.intern(location) });
  });
  return { v4: resolveEntries(4, entries[4]), v6: resolveEntries(6, entries[6]) };
}
