import { z } from 'zod';
import { checkCrossReferences } from '../pipeline/config/crossReferences.js';
import { checkHealthReferences } from '../capabilities/health/healthReferences.js';
import { healthSectionSchema } from '../capabilities/health/healthSchema.js';
import { geoSchema } from '../capabilities/geo/geoSchema.js';
import { doorRootShape, listenersSchema } from '../doors/listenersSchema.js';
import { LISTENERS } from './frontDoors.js';
import { metricsSchema } from '../capabilities/steering/metricsSchema.js';
import { checkPolicyReferences } from '../capabilities/policies/policyReferences.js';
import { actionSchema, policyBindingSchema } from '../capabilities/policies/policySchema.js';
import { gslbRecordSchema } from '../pipeline/config/recordSchema.js';
import { dataCenterSchema, serviceSchema } from '../pipeline/config/topologySchema.js';
import { zoneSchema } from '../pipeline/config/zoneSchema.js';

export const loggingSchema = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/** The whole configuration file (SPEC §7). Unknown keys anywhere are errors. */
export const configSchema = z
  .strictObject({
    listeners: listenersSchema(LISTENERS).default({ dns: [] }),
    ...doorRootShape(LISTENERS),
    geo: geoSchema.default({ sources: [], custom: [], mode: 'strict', implementation: 'auto' }),
    logging: loggingSchema.default({ level: 'info' }),
    metrics: metricsSchema.prefault({}),
    zones: z.array(zoneSchema).min(1),
    datacenters: z.array(dataCenterSchema).default([]),
    services: z.array(serviceSchema).default([]),
    records: z.array(gslbRecordSchema).default([]),
    /** DNS policies bound globally: tried for every non-static GSLB record after the record's own. */
    policies: policyBindingSchema.optional(),
    actions: z.array(actionSchema).default([]),
    /** The site this engine instance runs at (a data center's `site`); `localFirst` records answer it first (SPEC §6). */
    site: z.string().min(1).optional(),
    health: healthSectionSchema.default({ monitors: [], stateMaxAgeMs: 300_000 }),
  })
  .superRefine(checkCrossReferences)
  .superRefine(checkPolicyReferences)
  .superRefine(checkHealthReferences);

export type Config = z.output<typeof configSchema>;
export { geoSchema, geoSourceSchema } from '../capabilities/geo/geoSchema.js';
export type { GeoConfig, GeoCustomEntryConfig, GeoSourceConfig } from '../capabilities/geo/geoSchema.js';
