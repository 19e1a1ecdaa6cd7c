import { z } from 'zod';
import { domainNameSchema, ipSchema, latitudeSchema, locationSchema, longitudeSchema, portSchema } from '../../core/config/fieldSchemas.js';

/** A configuration object name: data centers, services, policies, actions. */
export const nameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'use letters, digits, ".", "_" and "-"');

/** The keys every data center has; capabilities add theirs after them (`dataCenterSchemaOf`). */
export const dataCenterShape = {
  name: nameSchema.describe('Name of the data center, referenced by endpoints, policies and actions.'),
  /** Location in dotted qualifiers (`NA.US`, `Europe.NL.*.Amsterdam`); omitted means all wildcards. */
  location: locationSchema.optional().describe('Location of the data center in dotted qualifiers (NA.US, Europe.NL.*.Amsterdam); omitted means all wildcards.'),
  lat: latitudeSchema.optional().describe('Latitude of the data center in degrees (-90–90), for nearest-by-coordinates choices.'),
  lon: longitudeSchema.optional().describe('Longitude of the data center in degrees (-180–180), for nearest-by-coordinates choices.'),
  /** The site this data center belongs to, when several DCs share one (defaults to the DC name). */
  site: nameSchema.optional().describe('Site this data center belongs to when several data centers share one; default the data center name.'),
};

/** A data center (site): where endpoints live; `extra` are the keys capabilities add. */
export function dataCenterSchemaOf<E extends z.ZodRawShape>(extra: E) {
  return z.strictObject({ ...dataCenterShape, ...extra });
}

/**
 * The keys every endpoint has; capabilities add theirs after them (`endpointSchemaOf`). An
 * endpoint of a service in a data center has an `address` (answers A or AAAA records, by family)
 * or a `target` name (answers CNAME, MX, SRV). For MX the preference is `priority`; for SRV,
 * priority, weight and `port` go into the record.
 */
export const endpointShape = {
  dc: nameSchema.describe('Name of the data center this endpoint lives in.'),
  address: ipSchema.optional().describe('IPv4 or IPv6 address of the endpoint, answered in A or AAAA records; exactly one of address or target.'),
  target: domainNameSchema.optional().describe('Target name of the endpoint, answered in CNAME, MX or SRV records; exactly one of address or target.'),
  port: portSchema.optional().describe('Port of the endpoint in SRV answers (with target only).'),
  /** Relative share inside the DC for weighted algorithms; 0 = only when no positive weight is available. */
  weight: z
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(1)
    .describe('Relative share inside the data center for weighted balanceAlgorithms and SRV weight; 0 only when no positive weight is available; default 1.'),
  /** Lower is preferred (as in SRV and MX). */
  priority: z.number().int().min(0).max(65535).default(1).describe('Priority of the endpoint, lower preferred (MX preference, SRV priority); default 1.'),
  enabled: z.boolean().default(true).describe('Whether the endpoint is a candidate for answers; false leaves it out; default true.'),
  /** Endpoint coordinates (degrees) for `nearest`; default to its DC's. */
  lat: latitudeSchema.optional().describe("Latitude of the endpoint in degrees for nearest choices; default its data center's."),
  lon: longitudeSchema.optional().describe("Longitude of the endpoint in degrees for nearest choices; default its data center's."),
};

/** An endpoint with the keys capabilities add (`extra`), and the rules that tie its fields together. */
export function endpointSchemaOf<E extends z.ZodRawShape>(extra: E) {
  return z.strictObject({ ...endpointShape, ...extra }).superRefine((value, ctx) => {
    const e = value as { readonly address?: string; readonly target?: string; readonly port?: number };
    if ((e.address === undefined) === (e.target === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'an endpoint has exactly one of "address" or "target"' });
    }
    if (e.port !== undefined && e.target === undefined) {
      ctx.addIssue({ code: 'custom', path: ['port'], message: '"port" is only meaningful with "target" (SRV)' });
    }
  });
}

/** A named application with endpoints in data centers. */
export function serviceSchemaOf<T extends z.ZodType>(endpoint: T) {
  return z.strictObject({
    name: nameSchema.describe('Name of the service, referenced by GSLB records.'),
    endpoints: z.array(endpoint).min(1).describe('The endpoints of the service in the data centers, at least one.'),
  });
}

const baseDataCenter = dataCenterSchemaOf({});
const baseEndpoint = endpointSchemaOf({});

/** What the query path reads of a data center (capabilities read their own keys with their own types). */
export type DataCenterConfig = z.output<typeof baseDataCenter>;
/** What the query path reads of an endpoint. */
export type EndpointConfig = z.output<typeof baseEndpoint>;
/** What the query path reads of a service. */
export interface ServiceConfig {
  readonly name: string;
  readonly endpoints: readonly EndpointConfig[];
}
