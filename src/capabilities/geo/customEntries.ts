import { z } from 'zod';
import { latitudeSchema, locationSchema, longitudeSchema } from '../../core/config/fieldSchemas.js';
import { familyBits, parseCidr, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { WILDCARD, type Location, type Qualifiers } from '../../core/location/location.js';
import type { FamilyTilings } from './locationFormat.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { lastAddress, resolveEntries, type Family, type RangeEntry } from '../../core/lpm/tiling.js';

const addressSchema = z.string().transform((s, ctx): IpAddress => {
  try {
    return parseIp(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/**
 * A custom location entry (`geo.custom[]`): a CIDR prefix or an inclusive `from`/`to` range, and
 * the location its addresses get. It replaces the database inside its range; among custom
 * entries the more specific (smaller) range wins. `*` and missing trailing qualifiers mean
 * "unknown" here.
 */
export const geoCustomEntrySchema = z
  .strictObject({
    cidr: z.string().optional().describe('CIDR prefix the entry covers; either cidr or both from and to.'),
    from: addressSchema.optional().describe('First address of the inclusive range the entry covers.'),
    to: addressSchema.optional().describe('Last address of the inclusive range the entry covers, same family as from.'),
    location: locationSchema.describe('Location its addresses get, in dotted qualifiers (EU.NL.North Holland.Amsterdam); * means unknown.'),
    lat: latitudeSchema.optional().describe("Latitude in degrees of the entry's addresses; give both lat and lon or neither."),
    lon: longitudeSchema.optional().describe("Longitude in degrees of the entry's addresses; give both lat and lon or neither."),
    asn: z.number().int().min(1).max(4294967295).optional().describe("Autonomous system number of the entry's addresses."),
  })
  .superRefine((e, ctx) => {
    if ((e.lat === undefined) !== (e.lon === undefined)) {
      ctx.addIssue({ code: 'custom', path: [e.lat === undefined ? 'lat' : 'lon'], message: 'give both "lat" and "lon" or neither' });
    }
    const hasRange = e.from !== undefined || e.to !== undefined;
    if ((e.cidr !== undefined) === hasRange) {
      ctx.addIssue({ code: 'custom', message: 'an entry has either "cidr" or both "from" and "to"' });
      return;
    }
    if (e.cidr !== undefined) {
      try {
        parseCidr(e.cidr);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['cidr'], message: (err as Error).message });
      }
      return;
    }
    if (e.from === undefined || e.to === undefined) {
      ctx.addIssue({ code: 'custom', path: [e.from === undefined ? 'from' : 'to'], message: 'a range needs both "from" and "to"' });
      return;
    }
    if (e.from.family !== e.to.family) ctx.addIssue({ code: 'custom', path: ['to'], message: '"from" and "to" are of different address families' });
    else if (compareAddresses(e.from, e.to) > 0) ctx.addIssue({ code: 'custom', path: ['to'], message: '"to" is below "from"' });
  });

function compareAddresses(a: IpAddress, b: IpAddress): number {
  return a.w0 - b.w0 || a.w1 - b.w1 || a.w2 - b.w2 || a.w3 - b.w3;
}

/** A validated custom location entry. */
export type GeoCustomEntryConfig = z.output<typeof geoCustomEntrySchema>;

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

/**
 * The address range a custom entry covers (a CIDR's first to last address, or `from`–`to`).
 * @throws Error when the entry's CIDR does not parse (the schema reports it first).
 */
export function entryRange(e: GeoCustomEntryConfig): { family: Family; start: bigint; end: bigint } {
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
