import { z } from 'zod';
import { domainNameSchema, ttlSchema } from '../../core/config/fieldSchemas.js';
import { GSLB_RECORD_TYPES, type GslbRecordType } from '../../core/dns/records.js';
import type { SubnetConfig } from '../../core/net/subnet.js';
import { clientsSchema } from './clientsSchema.js';

/**
 * The fields every selection policy has, whatever capability implements it; `algorithms` are
 * the `balanceAlgorithm` names the capabilities provide (the first of the composition's list
 * order comes first in the schema's enum).
 */
export function commonPolicyFields(algorithms: readonly string[]) {
  return {
    /** How many data centers go into an answer (docs/PRODUCT.md §3); fewer when fewer are available. */
    pickDcCount: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(1)
      .describe('How many data centers go into an answer (fewer when fewer are available), 1–64; default 1.'),
    /** How the records inside each chosen data center are spread (docs/PRODUCT.md §3). */
    balanceAlgorithm: z
      .enum(algorithms as [string, ...string[]])
      .default('round-robin')
      .describe('How the endpoints inside each chosen data center are spread across answers; default round-robin.'),
  };
}

/** The shape of {@link commonPolicyFields}, which every capability's policy variant spreads. */
export type CommonPolicyShape = ReturnType<typeof commonPolicyFields>;

/**
 * The keys every GSLB record has around its `policy`: a name and type whose answers are chosen
 * per query from the endpoints of `service`. `failsafe` holds the operator's last-resort data
 * (addresses for A/AAAA, names for CNAME, presentation form for MX/SRV), answered with
 * `failsafeTtl` when selection yields nothing.
 */
const recordHead = {
  name: domainNameSchema.describe('Absolute name of the GSLB record, inside one of the zones.'),
  type: z.enum(GSLB_RECORD_TYPES).describe("Record type answered from the service's endpoints (A/AAAA from addresses; CNAME, MX, SRV from targets)."),
  ttl: ttlSchema.default(30).describe('TTL of the answers, in seconds or with BIND units (1h); default 30.'),
  service: z.string().min(1).describe('Name of the service whose endpoints this GSLB record answers with.'),
};
const recordTail = {
  failsafe: z
    .array(z.string())
    .default([])
    .describe('Fail-safe data answered when selection yields nothing: addresses for A/AAAA, names for CNAME, presentation form for MX/SRV; default none.'),
  failsafeTtl: ttlSchema.optional().describe("TTL in seconds (or BIND units) of fail-safe answers; default the record's ttl."),
  /**
   * Weights between data centers, by name (0–65535; 1 for a data center not listed): when more
   * data centers tie at the pickDcCount cut than fit, the answer's are drawn by weighted random
   * (`weightedTieBreak`, `selection/pickDcs.ts`), e.g. `{ fra1: 70, iad1: 30 }`; 0 is a last resort.
   */
  dcWeights: z
    .record(z.string(), z.number().int().min(0).max(65535))
    .optional()
    .describe('Weights (0–65535, 1 when not listed) per data center name for the weighted draw among data centers tied at the pickDcCount cut.'),
  /** The clients this record answers at a name that also holds a CNAME or other records (`clientsSchema.ts`). */
  clients: clientsSchema
    .optional()
    .describe('Client subnets this GSLB record answers at a name that also holds a CNAME or other records; others get the other side.'),
};

/**
 * A GSLB record: its own keys, `policy` — one of the capabilities' policy variants, by `type`,
 * `defaultPolicy` when absent — and then the keys capabilities add (`extra`, in their order).
 */
export function gslbRecordSchemaOf<P extends readonly [z.ZodObject, ...z.ZodObject[]], E extends z.ZodRawShape>(
  policies: P,
  defaultPolicy: Readonly<Record<string, unknown>>,
  extra: E,
) {
  const policy = z
    .discriminatedUnion('type', policies)
    .default(defaultPolicy as never)
    .describe('Selection policy choosing the data centers of each answer, by type; default static-proximity.');
  return z.strictObject({ ...recordHead, policy, ...recordTail, ...extra });
}

/** What every policy variant has, as the query path reads it. */
export interface PolicyConfig {
  readonly type: string;
  readonly pickDcCount: number;
  readonly balanceAlgorithm: string;
}

/** What the query path reads of a GSLB record (capabilities read their own keys with their own types). */
export interface GslbRecordConfig {
  readonly name: string;
  readonly type: GslbRecordType;
  readonly ttl: number;
  readonly service: string;
  readonly policy: PolicyConfig;
  readonly failsafe: readonly string[];
  readonly failsafeTtl?: number | undefined;
  readonly dcWeights?: Readonly<Record<string, number>> | undefined;
  /** The client subnets it answers at a name split between a CNAME and other records (`clientsSchema.ts`). */
  readonly clients?: readonly SubnetConfig[] | undefined;
}
