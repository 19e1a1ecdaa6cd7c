import { z } from 'zod';
import { checkDoorReferences } from '../doors/doorReferences.js';
import { doorRootShape, listenersSchema } from '../doors/listenersSchema.js';
import { composeConfigSchema } from '../pipeline/composeSchema.js';
import { CAPABILITIES } from './capabilities.js';
import { LISTENERS } from './frontDoors.js';
import { storeSchema } from './sharedState/storeSchema.js';

export const loggingSchema = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/**
 * `watch`: reload when the configuration file changes (default true): at once when it is replaced
 * (rename, symlink swap), after it settled when it is written in place (`settledFileWatch.ts`).
 * `false` leaves reloads to SIGHUP and `POST /reload`.
 */
export const watchSchema = z.boolean().default(true);

/** The order of the top-level keys in the schema (and in `gslbd schema`): as an operator reads a file. */
const KEY_ORDER = [
  'listeners',
  'dns',
  'geo',
  'logging',
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
    listeners: listenersSchema(LISTENERS).default({ dns: [] }),
    ...doorRootShape(LISTENERS),
    logging: loggingSchema.default({ level: 'info' }),
    store: storeSchema.optional(),
    watch: watchSchema,
  },
  KEY_ORDER,
).superRefine((config, ctx) => checkDoorReferences(LISTENERS, config, ctx));

export type Config = z.output<typeof configSchema>;
export { geoSchema, geoSourceSchema } from '../capabilities/geo/geoSchema.js';
export type { GeoConfig, GeoSourceConfig } from '../capabilities/geo/geoSchema.js';
export type { GeoCustomEntryConfig } from '../capabilities/geo/customEntries.js';
