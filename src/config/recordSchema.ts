import { z } from 'zod';
import { GSLB_RECORD_TYPES } from '../dns/records.js';
import { balanceAlgorithmNames } from '../selection/balance/registry.js';
import { domainNameSchema, ttlSchema } from './fieldSchemas.js';

/** Fields every selection policy has. */
const commonPolicyFields = {
  /** How many data centers go into an answer (SPEC §3); fewer when fewer are available. */
  pickDcCount: z.number().int().min(1).max(64).default(1),
  /** How the records inside each chosen data center are spread (SPEC §3). */
  balanceAlgorithm: z.enum(balanceAlgorithmNames as [string, ...string[]]).default('round-robin'),
};

/**
 * Static proximity (SPEC §4): the data centers sharing the most leading location qualifiers
 * with the client win; ties go to the nearest by coordinates, then to rotation. A client whose
 * location is unknown gets the `default` data centers (all available ones when none are set).
 */
export const staticProximityPolicySchema = z.strictObject({
  type: z.literal('static-proximity'),
  ...commonPolicyFields,
  default: z.array(z.string()).default([]),
});

/** The selection policy of a GSLB record, by `type`. */
export const policySchema = z.discriminatedUnion('type', [staticProximityPolicySchema]);

/**
 * A GSLB record: a name and type whose answers are chosen per query from the endpoints of
 * `service`. `failsafe` holds the operator's last-resort data (addresses for A/AAAA, names for
 * CNAME, presentation form for MX/SRV), answered with `failsafeTtl` when selection yields nothing.
 */
export const gslbRecordSchema = z.strictObject({
  name: domainNameSchema,
  type: z.enum(GSLB_RECORD_TYPES),
  ttl: ttlSchema.default(30),
  service: z.string().min(1),
  policy: policySchema.default({ type: 'static-proximity', pickDcCount: 1, balanceAlgorithm: 'round-robin', default: [] }),
  failsafe: z.array(z.string()).default([]),
  failsafeTtl: ttlSchema.optional(),
});

export type PolicyConfig = z.output<typeof policySchema>;
export type GslbRecordConfig = z.output<typeof gslbRecordSchema>;
