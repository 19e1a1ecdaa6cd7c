import { parseCoordinate, parseRangeFields, readDelimitedFile, type LoadMode, type SkippedLines } from './delimitedFile.js';
import { qualifiersFromData, type Location } from '../../core/location/location.js';
import type { LocationTable } from './locationTable.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { resolveEntries, type Family, type RangeEntry } from '../../core/lpm/tiling.js';
import type { FamilyTilings, LocationFormat } from './locationFormat.js';

/** `format: netscaler`: a NetScaler location file, read with {@link loadNetScaler}. No options of its own. */
export const netscalerFormat: LocationFormat<{}> = {
  name: 'netscaler',
  options: {},
  load(file, _source, { table, mode, skipped }) {
    return { kind: 'locations', ...loadNetScaler(file, table, mode, skipped) };
  },
};

/**
 * Loads a NetScaler location file (Citrix ADC "default netscaler format", CTX235799):
 *
 * ```
 * from,to,continent,country,region,city,isp,org,longitude,latitude
 * ```
 *
 * Longitude comes before latitude. Addresses are dotted IPv4 (`192.0.2.0`) or unsigned decimal
 * (`3221225984`); IPv6 text is accepted too. The coordinates are optional (8 fields), and so are
 * trailing qualifiers (3–8 fields: `from,to,continent[,country…]`). A missing
 * continent is derived from the country, as NetScaler does. Lines starting with `#` (including
 * the `#NSGEO1.0`, `#Start`, `#End` format tags) and blank lines are skipped; bare `NSGEO1.0`,
 * `Start` and `End` tag lines too. Nested ranges resolve to the most specific whatever their
 * order in the file.
 * @throws SourceLineError (`file:line: reason`) in strict mode; Error when the file is unreadable.
 */
export function loadNetScaler(file: string, table: LocationTable, mode: LoadMode, skipped: SkippedLines): FamilyTilings {
  const entries: Record<Family, RangeEntry[]> = { 4: [], 6: [] };
  readDelimitedFile(file, mode, skipped, (f) => {
    if (f.length === 1 && /^(nsgeo\d+(\.\d+)?|start|end)$/i.test(f[0]!)) return;
    if (f.length < 3 || f.length === 9 || f.length > 10) {
      throw new Error(
        `expected from,to,continent,country,region,city,isp,org,longitude,latitude (trailing qualifiers and the coordinates may be left out); found ${f.length} fields`,
      );
    }
    const { family, start, end } = parseRangeFields(f[0]!, f[1]!, undefined);
    const country = f[3] ?? '';
    const continent = f[2]! || continentOfCountry(country);
    const qualifiers = qualifiersFromData([continent, country, f[4] ?? '', f[5] ?? '', f[6] ?? '', f[7] ?? '']);
    if (qualifiers.every((q) => q === '')) throw new Error('a location needs at least one qualifier');
    const location: { -readonly [K in keyof Location]: Location[K] } = { qualifiers };
    const lon = parseCoordinate(f[8] ?? '', 'longitude', 180);
    const lat = parseCoordinate(f[9] ?? '', 'latitude', 90);
    if ((lat === undefined) !== (lon === undefined)) throw new Error('give both longitude and latitude or neither');
    if (lat !== undefined && lon !== undefined) {
      location.lat = Math.round(lat * 1e4) / 1e4;
      location.lon = Math.round(lon * 1e4) / 1e4;
    }
    entries[family].push({ start, end, value: table.intern(location) });
  });
  return { v4: resolveEntries(4, entries[4]), v6: resolveEntries(6, entries[6]) };
}
