import { isIP } from 'node:net';
import { z } from 'zod';
import { canonicalIfIpText } from '../../core/net/ipAddress.js';
import { domainNameSchema, ipSchema, portSchema, ttlSchema } from '../../core/config/fieldSchemas.js';

/**
 * Configuration of health monitoring (src/capabilities/health/README.md): monitor definitions, the check
 * target of an endpoint, data center check points, and what a GSLB record does with health
 * (cold start, tiers, all-down policy, local-first, TTL while down). Times are in milliseconds
 * unless the key says otherwise; TTLs are in seconds.
 */

const monitorNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'use letters, digits, ".", "_" and "-"');

/** Fields every monitor has. */
const monitorCommon = {
  name: monitorNameSchema,
  /** Time between two checks of one target (ms). */
  intervalMs: z.number().int().min(10).max(3_600_000).default(5000),
  /** A check not finished after this long fails (ms); at most the interval. */
  timeoutMs: z.number().int().min(1).max(600_000).default(2000),
  /** Consecutive successes that bring a down target up. */
  rise: z.number().int().min(1).max(100).default(2),
  /** Consecutive failures that bring an up target down. */
  fall: z.number().int().min(1).max(100).default(3),
  /** Each interval is stretched or shrunk by up to this fraction at random, so checks do not align. */
  jitter: z.number().min(0).max(0.5).default(0.1),
  /** Port checked when the endpoint's `check.port` does not say (defaults: http 80, https 443, dns 53; tcp has none). */
  port: portSchema.optional(),
};

/** HTTP status codes a check accepts: numbers, or classes written `2xx`. */
/**
 * An expected final status: 200–599 or a class `2xx`…`5xx`. 1xx responses are interim (RFC 9110
 * §15.2): the reader skips them and judges the final response, so a 1xx could never match.
 */
const statusPatternSchema = z.union([
  z.number().int().min(200, 'a 1xx response is interim (RFC 9110 §15.2), never the final status').max(599),
  z.string().regex(/^[2-5]xx$/, 'a status class is written like "2xx" (1xx responses are interim, never final)'),
]);

const regexSchema = z.string().min(1).refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a valid regular expression' },
);

const httpFields = {
  method: z.enum(['GET', 'HEAD', 'POST', 'OPTIONS']).default('GET'),
  path: z.string().startsWith('/', 'a path starts with "/"').default('/'),
  /** Host header; defaults to the endpoint's `check.host`, else the checked address. */
  host: z.string().min(1).optional(),
  /** Accepted status codes (default 200 only, as gdnsd's http_status). */
  expectStatus: z.array(statusPatternSchema).min(1).default([200]),
  /** The body (first 64 KiB) must contain this text. */
  bodyContains: z.string().min(1).optional(),
  /** The body (first 64 KiB) must match this regular expression (JavaScript syntax). */
  bodyMatches: regexSchema.optional(),
};

/** TCP connect: up when the three-way handshake completes within the timeout. */
export const tcpMonitorSchema = z.strictObject({ type: z.literal('tcp'), ...monitorCommon });

/**
 * A HEAD response has no body (RFC 9110 §9.3.2), so `bodyContains` or `bodyMatches` with HEAD
 * would fail every check: the monitor would hold its targets down for ever. Refused at load.
 */
function headHasNoBody(m: { method: string; bodyContains?: string; bodyMatches?: string }, ctx: z.RefinementCtx): void {
  if (m.method !== 'HEAD') return;
  for (const key of ['bodyContains', 'bodyMatches'] as const) {
    if (m[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `a HEAD response has no body to check: use method GET, or drop ${key}` });
  }
}

/** HTTP over a new connection per check. */
export const httpMonitorSchema = z.strictObject({ type: z.literal('http'), ...monitorCommon, ...httpFields }).superRefine(headHasNoBody);

/** HTTPS over a new connection per check: SNI and certificate verification as configured. */
export const httpsMonitorSchema = z.strictObject({
  type: z.literal('https'),
  ...monitorCommon,
  ...httpFields,
  /** TLS server name (SNI); defaults to the Host header when that is a name. */
  sni: domainNameSchema.optional(),
  /** Verify the server certificate and its name (default true). */
  tlsVerify: z.boolean().default(true),
  /** PEM file of trusted CAs instead of Node's bundled roots (relative to the configuration file). */
  caFile: z.string().min(1).optional(),
}).superRefine(headHasNoBody);

/** One DNS query over UDP or TCP: up when the rcode (and, if set, an answer) is as expected. */
export const dnsMonitorSchema = z.strictObject({
  type: z.literal('dns'),
  ...monitorCommon,
  /** `udp` (default) or `tcp` (RFC 1035 §4.2.2 framing, a new connection per check). */
  transport: z.enum(['udp', 'tcp']).default('udp'),
  queryName: domainNameSchema,
  queryType: z.enum(['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'SRV', 'TXT', 'PTR']).default('A'),
  expectRcode: z.enum(['NOERROR', 'NXDOMAIN', 'REFUSED', 'SERVFAIL', 'NOTIMP', 'FORMERR']).default('NOERROR'),
  /** An answer record of `queryType` whose data, in presentation form, equals this (e.g. `192.0.2.1`). */
  expectAnswer: z.string().min(1).optional(),
});

export const monitorSchema = z.discriminatedUnion('type', [tcpMonitorSchema, httpMonitorSchema, httpsMonitorSchema, dnsMonitorSchema]);

/**
 * Where an endpoint's monitors connect when that is not the answer address: another `address`,
 * a `port`, and the `host` name used as HTTP Host and TLS SNI.
 */
export const checkTargetSchema = z.strictObject({
  address: ipSchema.optional(),
  port: portSchema.optional(),
  host: domainNameSchema.optional(),
});

/** One check point of a data center: a monitor run against an address. */
export const checkPointSchema = z.strictObject({
  monitor: monitorNameSchema,
  address: ipSchema,
  port: portSchema.optional(),
  host: domainNameSchema.optional(),
});

/**
 * A data center's status (`host.status`, SPEC §3) from its WAN and LAN check points: each group
 * is up by `rule` (`all` up, `any` up, `quorum`: more than half up), and the data center is up
 * when every non-empty group is.
 */
export const dcCheckPointsSchema = z
  .strictObject({
    rule: z.enum(['all', 'any', 'quorum']).default('all'),
    wan: z.array(checkPointSchema).default([]),
    lan: z.array(checkPointSchema).default([]),
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
    dcs: z.array(z.string().min(1)).default([]),
    endpoints: z.array(z.string().min(1).transform(canonicalIfIpText)).default([]),
    threshold: fractionSchema.optional(),
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
  coldStart: z.union([z.literal('unknown-up'), z.strictObject({ waitMs: z.number().int().min(1).max(600_000) })]).default('unknown-up'),
  threshold: fractionSchema.optional(),
  tiers: z.array(tierSchema).default([]),
  allDown: z.enum(['fail-open', 'fail-closed', 'failsafe']).optional(),
  negativeTtl: ttlSchema.default(10),
  downTtl: ttlSchema.optional(),
  localFirst: z.boolean().default(false),
});

/**
 * The `health` section: monitors, and the state file that carries last-known health across a
 * restart (ignored when older than `stateMaxAgeMs`; relative paths are relative to the
 * configuration file).
 */
export const healthSectionSchema = z.strictObject({
  monitors: z.array(monitorSchema).default([]),
  stateFile: z.string().min(1).optional(),
  stateMaxAgeMs: z.number().int().min(0).max(30 * 86_400_000).default(300_000),
});

/** The defaults of a record's `health` key. */
export const RECORD_HEALTH_DEFAULTS: RecordHealthConfig = { coldStart: 'unknown-up', tiers: [], negativeTtl: 10, localFirst: false };

export type MonitorConfig = z.output<typeof monitorSchema>;
export type HttpMonitorConfig = z.output<typeof httpMonitorSchema> | z.output<typeof httpsMonitorSchema>;
export type DnsMonitorConfig = z.output<typeof dnsMonitorSchema>;
export type CheckTargetConfig = z.output<typeof checkTargetSchema>;
export type CheckPointConfig = z.output<typeof checkPointSchema>;
export type DcCheckPointsConfig = z.output<typeof dcCheckPointsSchema>;
export type TierConfig = z.output<typeof tierSchema>;
export type RecordHealthConfig = z.output<typeof recordHealthSchema>;
export type HealthSectionConfig = z.output<typeof healthSectionSchema>;

/** True when `host` may be sent as TLS SNI (RFC 6066 §3: a host name, never an IP literal). */
export function isSniName(host: string): boolean {
  return isIP(host) === 0;
}
