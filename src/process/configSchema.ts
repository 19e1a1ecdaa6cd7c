import { z } from 'zod';
import { checkDoorReferences } from '../doors/doorReferences.js';
import { doorRootShape, listenersSchema } from '../doors/listenersSchema.js';
import { composeConfigSchema } from '../pipeline/composeSchema.js';
import { restartOnly, restartSettings, type RestartSetting } from '../core/config/restartOnly.js';
import { CAPABILITIES } from './capabilities.js';
import { LISTENERS } from './frontDoors.js';
import { storeSchema } from './sharedState/storeSchema.js';

export const loggingSchema = z.strictObject({
  /** Lowest level written; applies on reload. */
  level: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .describe('Lowest log level written; applies on reload; default info.'),
  /** `epoch` (ms, pino's default) or `iso` (ISO 8601 UTC text); needs a restart. */
  time: restartOnly(z.enum(['epoch', 'iso']), 'the logger is built at start')
    .default('epoch')
    .describe('Log time format: epoch (ms) or iso (ISO 8601 UTC text); default epoch (restart needed).'),
  /** `numbers` (pino's 10–60) or `names` (`info`, `warn`, …); needs a restart. */
  levels: restartOnly(z.enum(['numbers', 'names']), 'the logger is built at start')
    .default('numbers')
    .describe('Log level format: numbers (10–60) or names (info, warn, …); default numbers (restart needed).'),
});

/**
 * `queryCounters`: the query counters beyond rcodes, query types and data centers
 * (`EngineMetrics`); both apply on reload.
 */
export const queryCountersSchema = z
  .strictObject({
    zones: z.boolean().default(true).describe('Count questions per zone (gslbd_dns_queries_by_zone_total); bounded by the configured zones; default true.'),
    topRecords: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(20)
      .describe(
        'How many GSLB records gslbd_gslb_record_selections_total exports: every record is counted, only the most selected are series (0: none counted); default 20.',
      ),
  })
  .describe('Per-zone and per-record query counters in /metrics (applies on reload).');

/**
 * `watch`: reload when the configuration file changes (default true): at once when it is replaced
 * (rename, symlink swap), after it settled when it is written in place (`settledFileWatch.ts`).
 * `false` leaves reloads to SIGHUP and `POST /reload`.
 */
export const watchSchema = z
  .boolean()
  .default(true)
  .describe('Reload when the configuration file or a zone file it names changes; false leaves reloads to SIGHUP and POST /reload; default true.');

/** The order of the top-level keys in the schema (and in `gslbd schema`): as an operator reads a file. */
const KEY_ORDER = [
  'listeners',
  'dns',
  'geo',
  'logging',
  'queryCounters',
  'metrics',
  'agents',
  'networkProximity',
  'zones',
  'datacenters',
  'services',
  'records',
  'policies',
  'actions',
  'site',
  'health',
  'store',
  'watch',
];

/**
 * The whole configuration file (docs/PRODUCT.md §7), composed from the capabilities' fragments
 * (`capabilities.ts`), the front doors' listeners and the engine's own `logging`. Unknown keys
 * anywhere are errors. The front doors' cross-reference checks run after the capabilities'.
 */
export const configSchema = composeConfigSchema(
  CAPABILITIES,
  {
    listeners: listenersSchema(LISTENERS)
      .default({ dns: [] })
      .describe("The front doors' sockets: DNS, admin, redirect, PowerDNS and compact-protocol listeners; sockets open at start."),
    ...doorRootShape(LISTENERS),
    logging: loggingSchema.default({ level: 'info', time: 'epoch', levels: 'numbers' }).describe("The engine's log: level, time format, level format."),
    queryCounters: queryCountersSchema.default({ zones: true, topRecords: 20 }),
    store: restartOnly(storeSchema, 'the shared state store is opened at start')
      .optional()
      .describe('Where shared state (health verdicts, overrides, pushed metrics) lives; absent, each node keeps its own (restart needed).'),
    watch: watchSchema,
  },
  KEY_ORDER,
).superRefine((config, ctx) => checkDoorReferences(LISTENERS, config, ctx));

export type Config = z.output<typeof configSchema>;

/**
 * The settings a reload does not apply, found in the schema (fields marked with `restartOnly`):
 * a reload that changes one warns about it by path.
 */
export const RESTART_SETTINGS: readonly RestartSetting[] = restartSettings(configSchema);
export { geoSchema, geoSourceSchema } from '../capabilities/geo/geoSchema.js';
export type { GeoConfig, GeoSourceConfig } from '../capabilities/geo/geoSchema.js';
export type { GeoCustomEntryConfig } from '../capabilities/geo/customEntries.js';

/**
 * The JSON Schema of the configuration file (`gslbd schema`, for editors and CI validators): the
 * input form (defaults optional, TTLs as seconds or `1h`), draft 2020-12. What zod cannot express
 * (transforms' outputs) is left open rather than wrong.
 */
export function configJsonSchema(): Record<string, unknown> {
  return jsonSchemaOf(configSchema);
}

/**
 * The JSON Schema (draft 2020-12, input side) of any configuration schema, written as
 * {@link configJsonSchema} writes the whole file's: zod's check names that are no JSON Schema
 * formats dropped, one-or-more fields as "the item, or a list of items" with their description kept.
 */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    override({ jsonSchema }) {
      // zod writes its own check names (`starts_with`, `ends_with`, `includes`) as `format` next
      // to the `pattern` that carries the check; they are no JSON Schema formats, and validators
      // in strict mode (ajv) reject an unknown format.
      if (typeof jsonSchema.format === 'string' && !JSON_SCHEMA_FORMATS.has(jsonSchema.format)) delete jsonSchema.format;
      // A field that takes one value or a list (`oneOrMore` in its metadata) is parsed through a
      // list; in the file it may be either. Its description describes the field, not the list.
      // An object that needs one of several key sets (`requiredOneOf` in its metadata: a zone's
      // `soa` and `ns`, or its `zoneFile`): those keys leave `required` for an `anyOf` of the sets.
      if (Array.isArray(jsonSchema.requiredOneOf)) {
        const sets = jsonSchema.requiredOneOf as string[][];
        delete jsonSchema.requiredOneOf;
        const optional = new Set(sets.flat());
        const required = ((jsonSchema.required ?? []) as string[]).filter((k) => !optional.has(k));
        if (required.length > 0) jsonSchema.required = required;
        else delete jsonSchema.required;
        // Each option names its keys' schemas again (their descriptions): ajv's strict mode
        // (strictRequired) wants a required key defined where it is required, and it reads an
        // `anyOf` before the object's `properties`.
        const properties = (jsonSchema.properties ?? {}) as Record<string, { description?: string }>;
        jsonSchema.anyOf = sets.map((keys) => ({
          properties: Object.fromEntries(keys.map((k) => [k, { description: properties[k]?.description ?? k }])),
          required: keys,
        }));
      }
      if (jsonSchema.oneOrMore === true) {
        const description = jsonSchema.description;
        const list = { ...jsonSchema };
        delete list.oneOrMore;
        delete list.description;
        for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
        if (typeof description === 'string') jsonSchema.description = description;
        jsonSchema.anyOf = [list.items as typeof list, list];
      }
    },
  }) as Record<string, unknown>;
}

/** The formats of JSON Schema draft 2020-12 (§7.3) that zod emits. */
const JSON_SCHEMA_FORMATS: ReadonlySet<string> = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uuid',
  'regex',
]);
