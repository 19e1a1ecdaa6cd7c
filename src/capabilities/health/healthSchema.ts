import { z } from 'zod';
import { canonicalIfIpText } from '../../core/net/ipAddress.js';
import { domainNameSchema, ipSchema, portSchema, ttlSchema } from '../../core/config/fieldSchemas.js';
import { monitorNameSchema } from './checks/checkKind.js';
import { CHECK_KINDS, monitorSchemaOf, type CheckKindList } from './checks/registry.js';

/**
 * Configuration of health monitoring (src/capabilities/health/README.md): the `health` section
 * (monitors of the kinds in `checks/registry.ts`, the state file), the check target of an
 * endpoint, data center check points, and what a GSLB record does with health (cold start,
 * tiers, all-down policy, local-first, TTL while down). Times are in milliseconds unless the key
 * says otherwise; TTLs are in seconds.
 */

/** The monitor schema of the engine's check kinds (`checks/registry.ts`). */
export const monitorSchema = monitorSchemaOf(CHECK_KINDS);

/**
 * Where an endpoint's monitors connect when that is not the answer address: another `address`,
 * a `port`, and the `host` name used as HTTP Host and TLS SNI.
 */
export const checkTargetSchema = z.strictObject({
  address: ipSchema
    .optional()
    .describe("Address the monitors connect to instead of the endpoint's answer address (needed for a monitored target endpoint: monitors resolve no names)."),
  port: portSchema.optional().describe("Port the monitors connect to; default the monitor's port, else its kind's."),
  host: domainNameSchema.optional().describe('Name used as HTTP Host header and TLS SNI by the monitors.'),
});

/** One check point of a data center: a monitor run against an address. */
export const checkPointSchema = z.strictObject({
  monitor: monitorNameSchema.describe('Name of the health.monitors entry run against this check point.'),
  address: ipSchema.describe("Address the check point's monitor connects to."),
  port: portSchema.optional().describe("Port checked; default the monitor's port, else its kind's."),
  host: domainNameSchema.optional().describe('Name used as HTTP Host header and TLS SNI for this check point.'),
});

/**
 * A data center's status (`host.status`, docs/PRODUCT.md §3) from its WAN and LAN check points: each group
 * is up by `rule` (`all` up, `any` up, `quorum`: more than half up), and the data center is up
 * when every non-empty group is.
 */
export const dcCheckPointsSchema = z
  .strictObject({
    rule: z
      .enum(['all', 'any', 'quorum'])
      .default('all')
      .describe('When a check point group is up: all up, any up, or quorum (more than half up); default all.'),
    wan: z.array(checkPointSchema).default([]).describe('WAN check points of the data center; default none.'),
    lan: z.array(checkPointSchema).default([]).describe('LAN check points of the data center; default none.'),
  })
  .refine((c) => c.wan.length + c.lan.length > 0, { message: 'list at least one check point in "wan" or "lan"' });

/** A fraction in (0, 1]. */
const fractionSchema = z.number().gt(0).max(1);

/**
 * One tier of a record: data centers (`dcs`, all their endpoints) and/or single endpoints
 * (`endpoints`, by address or target as written in the service; an address in any spelling, as
 * endpoint addresses are canonicalised too). `threshold` overrides the record's.
 */
export const tierSchema = z
  .strictObject({
    dcs: z.array(z.string().min(1)).default([]).describe('Data centers of the tier (all their endpoints), by name; default none.'),
    endpoints: z
      .array(z.string().min(1).transform(canonicalIfIpText))
      .default([])
      .describe('Single endpoints of the tier, by address or target as written in the service; default none.'),
    threshold: fractionSchema.optional().describe("Fraction (0–1] of the tier's endpoint weight that must be up; default the record's threshold."),
  })
  .refine((t) => t.dcs.length + t.endpoints.length > 0, { message: 'a tier lists at least one data center or endpoint' });

/**
 * What a GSLB record does with health state (src/capabilities/health/README.md).
 * - `coldStart`: `unknown-up` (default) answers endpoints with no check result yet as if up;
 *   `{ waitMs }` leaves them out while an endpoint with a result is up, for at most `waitMs`
 *   after monitoring of them began. Unknown never leads to the all-down policy.
 * - `threshold`: a tier is up when at least this fraction of its endpoint weight is up (default:
 *   any endpoint up).
 * - `tiers`: ordered groups; the first tier that is up answers. Endpoints in no tier form an
 *   implicit last tier.
 * - `allDown`: `fail-open` (the first tier's endpoints as if up), `fail-closed` (NODATA with the
 *   SOA at `negativeTtl`), `failsafe` (the record's fail-safe list). Default: `failsafe` when the
 *   record has a fail-safe list, else `fail-open`.
 * - `downTtl`: answer TTL (s) while any endpoint of the record is down, when shorter than `ttl`.
 * - `localFirst`: answer the engine's own `site` while one of its endpoints is up, else a peer.
 */
export const recordHealthSchema = z.strictObject({
  coldStart: z
    .union([
      z.literal('unknown-up'),
      z.strictObject({
        waitMs: z
          .number()
          .int()
          .min(1)
          .max(600_000)
          .describe('At most this many ms after monitoring began, endpoints with no result yet are left out while one with a result is up.'),
      }),
    ])
    .default('unknown-up')
    .describe('Endpoints with no check result yet: unknown-up answers them as up, { waitMs } leaves them out for a while; default unknown-up.'),
  threshold: fractionSchema.optional().describe('A tier is up when at least this fraction (0–1] of its endpoint weight is up; default any endpoint up.'),
  tiers: z
    .array(tierSchema)
    .default([])
    .describe('Ordered groups of data centers or endpoints; the first tier that is up answers; the rest form an implicit last tier.'),
  allDown: z
    .enum(['fail-open', 'fail-closed', 'failsafe'])
    .optional()
    .describe('When every tier is down: fail-open, fail-closed (NODATA) or failsafe; default failsafe with a fail-safe list, else fail-open.'),
  negativeTtl: ttlSchema.default(10).describe("SOA TTL in seconds of the fail-closed NODATA answer (capped by the zone's); default 10."),
  downTtl: ttlSchema.optional().describe('Answer TTL in seconds while any endpoint of the GSLB record is down, when shorter than ttl.'),
  localFirst: z.boolean().default(false).describe("Answer the engine's own site while one of its endpoints is up, else a peer; default false."),
});

/**
 * The `health` section for monitors of `kinds`: monitors, and the state file that carries
 * last-known health across a restart (ignored when older than `stateMaxAgeMs`; relative paths
 * are relative to the configuration file).
 */
export function healthSectionSchemaOf<const K extends CheckKindList>(kinds: K) {
  return z.strictObject({
    monitors: z.array(monitorSchemaOf(kinds)).default([]).describe('The monitors (tcp, http, https, dns, grpc) endpoints and check points name; default none.'),
    stateFile: z.string().min(1).optional().describe('File carrying last-known health across a restart, relative to the configuration file; absent, none.'),
    stateMaxAgeMs: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400_000)
      .default(300_000)
      .describe('A state file older than this many ms is ignored (checks start unknown); default 300000.'),
    /**
     * Quorum health when the state store is shared (`store`; ignored otherwise): a check is down
     * when `observers` of the live nodes see it down (src/capabilities/health/quorum.ts; absent: 2
     * observers, votes live 15 s, 30 s of grace). `checkers` (r ≥ observers): each check is run by
     * r of the live nodes chosen by rendezvous hashing (src/capabilities/health/rendezvous.ts)
     * instead of by every node.
     */
    quorum: z
      .strictObject({
        observers: z.number().int().min(1).max(64).default(2).describe('Live nodes that must see a check down for it to be down; default 2.'),
        voteTtlSeconds: z.number().min(1).max(3600).default(15).describe("Seconds a node's vote on a check lives; default 15."),
        graceSeconds: z
          .number()
          .min(0)
          .max(86_400)
          .default(30)
          .describe("Seconds the store may be unreachable before this node's own verdicts decide alone; default 30."),
        checkers: z
          .number()
          .int()
          .min(1)
          .max(64)
          .optional()
          .describe('Live nodes (at least observers) that run each check, chosen by rendezvous hashing; default every node.'),
      })
      .refine((q) => q.checkers === undefined || q.checkers >= q.observers, { message: 'checkers must be at least observers', path: ['checkers'] })
      .optional()
      .describe('Quorum health across nodes sharing a store (ignored without store): a check is down when enough live nodes see it down.'),
  });
}

/** The `health` section of the engine's check kinds. */
export const healthSectionSchema = healthSectionSchemaOf(CHECK_KINDS);

/** The defaults of a record's `health` key. */
export const RECORD_HEALTH_DEFAULTS: RecordHealthConfig = { coldStart: 'unknown-up', tiers: [], negativeTtl: 10, localFirst: false };

export type CheckTargetConfig = z.output<typeof checkTargetSchema>;
export type CheckPointConfig = z.output<typeof checkPointSchema>;
export type DcCheckPointsConfig = z.output<typeof dcCheckPointsSchema>;
export type TierConfig = z.output<typeof tierSchema>;
export type RecordHealthConfig = z.output<typeof recordHealthSchema>;
export type HealthSectionConfig = z.output<typeof healthSectionSchema>;
