import { parseCoordinate, parseRangeFields, readDelimitedFile, type LoadMode, type SkippedLines } from './delimitedFile.js';
import { qualifiersFromData, type Location } from '../../core/location/location.js';
import type { LocationTable } from './locationTable.js';
import type { FamilyTilings } from './netscalerSource.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { resolveEntries, type Family, type RangeEntry } from '../../core/lpm/tiling.js';

/**
 * Loaders for the ip-location-db CSV files (github.com/sapics/ip-location-db; npm
 * `@ip-location-db/*`): no header, inclusive ranges, addresses as text or as decimal numbers
 * (the `-num.csv` variants; set `ipVersion: 6` for IPv6 numeric files).
 *
 * - country: `ip_range_start,ip_range_end,country_code`
 * - city: `ip_range_start,ip_range_end,country_code,state1,state2,city,postcode,latitude,longitude,timezone`
 *   (state1 → region, as the mmdb loader does; the continent is derived from the country)
 * - asn: `ip_range_start,ip_range_end,autonomous_system_number,autonomous_system_organization`
 */
export type IpLocationDbVariant = 'country' | 'city';

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
      qualifiers: qualifiersFromData(
        variant === 'country' ? [continentOfCountry(country), country] : [continentOfCountry(country), country, f[3]!, f[5]!],
      ),
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

/** An autonomous system of the ASN overlay. */
export interface AutonomousSystem {
  readonly asn: number;
  readonly organization: string;
}

/** The ASN overlay: tilings whose values index `systems` (0 = no AS data). */
export interface AsnOverlay extends FamilyTilings {
  /** `systems[v - 1]` is the AS of tiling value v. */
  readonly systems: readonly AutonomousSystem[];
}

/**
 * Loads an ASN file. Applied over the location sources, it replaces the ISP qualifier with the
 * AS organisation, qualifier 6 with `AS<number>` and sets the ASN (src/capabilities/geo/README.md).
 * @throws SourceLineError in strict mode; Error when the file is unreadable.
 */
export function loadIpLocationDbAsn(file: string, numericFamily: Family | undefined, mode: LoadMode, skipped: SkippedLines): AsnOverlay {
  const entries: Record<Family, RangeEntry[]> = { 4: [], 6: [] };
  const systems: AutonomousSystem[] = [];
  const byKey = new Map<string, number>();
  readDelimitedFile(file, mode, skipped, (f) => {
    if (f.length !== 4) throw new Error(`expected 4 fields for an ip-location-db asn file; found ${f.length}`);
    const { family, start, end } = parseRangeFields(f[0]!, f[1]!, numericFamily);
    if (!/^\d+$/.test(f[2]!) || Number(f[2]) < 1 || Number(f[2]) > 4294967295) throw new Error(`AS number "${f[2]}" is not in 1…4294967295`);
    const key = `${f[2]}\u0000${f[3]}`;
    let value = byKey.get(key);
    if (value === undefined) {
      systems.push({ asn: Number(f[2]), organization: f[3]! });
      value = systems.length;
      byKey.set(key, value);
    }
    entries[family].push({ start, end, value });
  });
  return { v4: resolveEntries(4, entries[4]), v6: resolveEntries(6, entries[6]), systems };
}

/** A location with the ISP/org qualifiers and the ASN taken from an autonomous system. */
export function withAutonomousSystem(base: Location, as: AutonomousSystem): Location {
  const q = [...base.qualifiers];
  q[4] = as.organization;
  q[5] = `AS${as.asn}`;
  const out: { -readonly [K in keyof Location]: Location[K] } = { qualifiers: qualifiersFromData(q) };
  if (base.lat !== undefined && base.lon !== undefined) {
    out.lat = base.lat;
    out.lon = base.lon;
  }
  out.asn = as.asn;
  return out;
}
