import type { GeoCustomEntryConfig } from './geoSchema.js';
import { familyBits, parseCidr, type IpAddress } from '../../core/net/ipAddress.js';
import { WILDCARD, type Location, type Qualifiers } from '../../core/location/location.js';
import type { FamilyTilings } from './netscalerSource.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { lastAddress, resolveEntries, type Family, type RangeEntry } from '../../core/lpm/tiling.js';

/**
 * Custom location entries from the configuration (`geo.custom`), NetScaler's `add location`:
 * each replaces the database inside its own range, whatever the database's prefix sizes there
 * (it punches a hole, and the neighbouring database ranges, and so their ECS scopes, shrink to
 * the remainder). Among custom entries the more specific (smaller) range wins; equal ranges → the
 * later entry.
 */
export interface CustomOverlay extends FamilyTilings {
  /** `locations[v - 1]` is the location of tiling value v (0 = no custom entry). */
  readonly locations: readonly Location[];
}

/** Resolves the configured custom entries into one tiling per family. */
export function customOverlay(entries: readonly GeoCustomEntryConfig[]): CustomOverlay {
  const ranges: Record<Family, RangeEntry[]> = { 4: [], 6: [] };
  const locations: Location[] = [];
  for (const e of entries) {
    const { family, start, end } = entryRange(e);
    locations.push(customLocation(e));
    ranges[family].push({ start, end, value: locations.length });
  }
  return { v4: resolveEntries(4, ranges[4]), v6: resolveEntries(6, ranges[6]), locations };
}

function entryRange(e: GeoCustomEntryConfig): { family: Family; start: bigint; end: bigint } {
  if (e.cidr !== undefined) {
    const { address, prefix } = parseCidr(e.cidr);
    const family = address.family;
    const hostBits = BigInt(familyBits(family) - prefix);
    const start = toBig(address);
    return { family, start, end: (start | ((1n << hostBits) - 1n)) & lastAddress(family) };
  }
  return { family: e.from!.family, start: toBig(e.from!), end: toBig(e.to!) };
}

function toBig(a: IpAddress): bigint {
  if (a.family === 4) return BigInt(a.w0);
  return (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n) | (BigInt(a.w2) << 32n) | BigInt(a.w3);
}

/**
 * The data location of a custom entry: wildcards (written or implied by a short dotted form)
 * become unknown (''), a missing continent is derived from the country.
 */
export function customLocation(e: GeoCustomEntryConfig): Location {
  const q = e.location.map((v) => (v === WILDCARD ? '' : v)) as string[];
  if (q[0] === '' && q[1] !== '') q[0] = continentOfCountry(q[1]!);
  const out: { -readonly [K in keyof Location]: Location[K] } = { qualifiers: q as unknown as Qualifiers };
  if (e.lat !== undefined && e.lon !== undefined) {
    out.lat = Math.round(e.lat * 1e4) / 1e4;
    out.lon = Math.round(e.lon * 1e4) / 1e4;
  }
  if (e.asn !== undefined) out.asn = e.asn;
  return out;
}
