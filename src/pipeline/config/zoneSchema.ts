import { z } from 'zod';
import { configuredName } from '../../core/dns/name.js';
import { parseRecordData } from '../../core/dns/presentation.js';
import type { RecordData, RecordType } from '../../core/dns/records.js';
import { domainNameSchema, ttlSchema } from '../../core/config/fieldSchemas.js';
import { clientsSchema } from './clientsSchema.js';

/** Types a static record in a zone may have (SOA comes from the zone's `soa`). */
export const STATIC_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'NS', 'MX', 'TXT', 'SRV', 'PTR', 'CAA', 'DS', 'TLSA', 'SSHFP', 'NAPTR', 'SVCB', 'HTTPS'] as const;

/**
 * A static record. `name` is relative to its zone (`www`, `@` for the apex, `*.dyn` for a
 * wildcard); targets inside `data` are absolute. `clients`: see `clientsSchema.ts`. `data` is in presentation form
 * (`10 mx.example.test`, `"0 issue \"ca.example\""`), or a list of strings for TXT.
 */
export const staticRecordSchema = z
  .strictObject({
    name: z.string().min(1).describe('Owner of the static record relative to its zone (www, @ for the apex, *.dyn for a wildcard).'),
    type: z.enum(STATIC_RECORD_TYPES).describe('Type of the static record.'),
    ttl: ttlSchema.optional().describe("TTL of the static record in seconds (or BIND units such as 1h); default the zone's ttl."),
    data: z
      .union([z.string(), z.array(z.string()).min(1)])
      .describe('Record data in presentation form (10 mx.example.test), or a list of strings for TXT; names inside are absolute.'),
    /** The clients this record answers at a name that also holds a CNAME or other records (`clientsSchema.ts`). */
    clients: clientsSchema.optional().describe('Client subnets this static record answers at a name that also holds a CNAME or other records.'),
  })
  .transform((r, ctx) => {
    // The owner is validated here so that a bad name is a configuration error, not a failure
    // when the snapshot is built; it stays as written (relative) for the cross-reference checks.
    if (r.name !== '@') {
      try {
        configuredName(r.name);
      } catch (e) {
        ctx.addIssue({ code: 'custom', path: ['name'], message: (e as Error).message });
      }
    }
    let parsed: RecordData;
    try {
      parsed = parseRecordData(r.type as RecordType, r.data);
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['data'], message: (e as Error).message });
      return z.NEVER;
    }
    return { name: r.name, type: r.type, ttl: r.ttl, data: parsed, ...(r.clients ? { clients: r.clients } : {}) };
  });

/**
 * SOA parameters (RFC 1035 §3.3.13; times in seconds). `serial: auto` (the default) makes the
 * engine keep the serial monotonic across reloads: the first load takes the current Unix time,
 * and a reload that changes the zone's content takes `max(previous + 1, now)`; a reload that does
 * not change the zone keeps it. A number is served as written.
 */
export const soaSchema = z.strictObject({
  mname: domainNameSchema.describe('SOA MNAME: the primary name server of the zone.'),
  rname: domainNameSchema.describe("SOA RNAME: the mailbox of the zone's administrator, as a domain name."),
  serial: z
    .union([z.literal('auto'), z.number().int().min(0).max(4294967295)])
    .default('auto')
    .describe('SOA serial: a number served as written, or auto (kept monotonic across reloads from the Unix time); default auto.'),
  refresh: ttlSchema.default(3600).describe('SOA refresh interval in seconds (or BIND units); default 3600.'),
  retry: ttlSchema.default(600).describe('SOA retry interval in seconds (or BIND units); default 600.'),
  expire: ttlSchema.default(604800).describe('SOA expire time in seconds (or BIND units); default 604800.'),
  /** Negative-caching TTL (RFC 2308 §4); negative answers use min(SOA TTL, minimum). */
  minimum: ttlSchema.default(60).describe('SOA minimum: negative-caching TTL in seconds (RFC 2308 §4); default 60.'),
  ttl: ttlSchema.optional().describe("TTL of the SOA record itself in seconds; default the zone's ttl."),
});

/**
 * A zone the engine is authoritative for. `soa` and `ns` are required here, where the zone file's
 * are already included (`zoneFileInclude.ts` runs before validation); in the file as written they
 * may come from `zoneFile` instead, which the JSON Schema says (`requiredOneOf`: either key set).
 */
export const zoneSchema = z
  .strictObject({
    name: domainNameSchema.describe('Absolute name of the zone the engine is authoritative for.'),
    /** Default TTL (s) of records that set none. */
    ttl: ttlSchema.default(300).describe("Default TTL in seconds (or BIND units) of the zone's records that set none; default 300."),
    soa: soaSchema.describe('SOA parameters of the zone (RFC 1035 §3.3.13), times in seconds.'),
    /** Name servers of the zone (absolute names), served as the apex NS RRset. */
    ns: z.array(domainNameSchema).min(1).describe('Name servers of the zone (absolute names), served as the apex NS RRset.'),
    records: z.array(staticRecordSchema).default([]).describe('Static records of the zone; default none.'),
    /**
     * An RFC 1035 zone file (relative to the configuration file) whose records join `records`; its
     * SOA and apex NS fill `soa` and `ns` when the zone sets none, else must agree with them
     * (`zoneFileInclude.ts`). Read again at every reload.
     */
    zoneFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        "RFC 1035 zone file (relative to the configuration file) whose records join the zone's static records; its SOA and apex NS must agree with the zone's; read again at every reload.",
      ),
  })
  .meta({ requiredOneOf: [['soa', 'ns'], ['zoneFile']] });

export type ZoneConfig = z.output<typeof zoneSchema>;
export type StaticRecordConfig = z.output<typeof staticRecordSchema>;
