import { z } from 'zod';
import { domainNameSchema, ipSchema, latitudeSchema, locationSchema, longitudeSchema, portSchema } from '../../core/config/fieldSchemas.js';
import { checkTargetSchema, dcCheckPointsSchema } from '../../capabilities/health/healthSchema.js';

/** A configuration object name: data centers, services, policies, actions. */
export const nameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'use letters, digits, ".", "_" and "-"');

/** A data center (site): where endpoints live. */
export const dataCenterSchema = z.strictObject({
  name: nameSchema,
  /** Location in dotted qualifiers (`NA.US`, `Europe.NL.*.Amsterdam`); omitted means all wildcards. */
  location: locationSchema.optional(),
  lat: latitudeSchema.optional(),
  lon: longitudeSchema.optional(),
  /** The site this data center belongs to, when several DCs share one (defaults to the DC name). */
  site: nameSchema.optional(),
  /** WAN and LAN check points whose composite is the data center's status (src/capabilities/health/README.md). */
  checkPoints: dcCheckPointsSchema.optional(),
});

/**
 * An endpoint of a service in a data center: an `address` (answers A or AAAA records, by family)
 * or a `target` name (answers CNAME, MX, SRV). For MX the preference is `priority`; for SRV,
 * priority, weight and `port` go into the record.
 */
export const endpointSchema = z
  .strictObject({
    dc: nameSchema,
    address: ipSchema.optional(),
    target: domainNameSchema.optional(),
    port: portSchema.optional(),
    /** Relative share inside the DC for weighted algorithms; 0 = only when no positive weight is available. */
    weight: z.number().int().min(0).max(65535).default(1),
    /** Lower is preferred (as in SRV and MX). */
    priority: z.number().int().min(0).max(65535).default(1),
    enabled: z.boolean().default(true),
    /** Endpoint coordinates (degrees) for `nearest`; default to its DC's. */
    lat: latitudeSchema.optional(),
    lon: longitudeSchema.optional(),
    /** Names of `health.monitors` run against this endpoint; it is up when all of them are. */
    monitors: z.array(z.string().min(1)).default([]),
    /** Where the monitors connect when that is not the answer address (src/capabilities/health/README.md). */
    check: checkTargetSchema.optional(),
  })
  .superRefine((e, ctx) => {
    if ((e.address === undefined) === (e.target === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'an endpoint has exactly one of "address" or "target"' });
    }
    if (e.port !== undefined && e.target === undefined) {
      ctx.addIssue({ code: 'custom', path: ['port'], message: '"port" is only meaningful with "target" (SRV)' });
    }
  });

/** A named application with endpoints in data centers. */
export const serviceSchema = z.strictObject({
  name: nameSchema,
  endpoints: z.array(endpointSchema).min(1),
});

export type DataCenterConfig = z.output<typeof dataCenterSchema>;
export type EndpointConfig = z.output<typeof endpointSchema>;
export type ServiceConfig = z.output<typeof serviceSchema>;
