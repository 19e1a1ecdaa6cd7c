import { z } from 'zod';
import { GSLB_RECORD_TYPES } from '../../core/dns/records.js';
import { multiSourcePolicySchema } from '../../capabilities/steering/multiSourcePolicySchema.js';
import { commonPolicyFields } from './policyFields.js';
import { domainNameSchema, ttlSchema } from '../../core/config/fieldSchemas.js';
import { policyBindingSchema, staticRuleSchema, subnetOverlapSchema } from '../../capabilities/policies/policySchema.js';
import { RECORD_HEALTH_DEFAULTS, recordHealthSchema } from '../../capabilities/health/healthSchema.js';

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

/**
 * Static mode (SPEC §3): ordered rules map clients (subnet, location, qname) to data center
 * lists; no metrics and no DNS policies take part. When no rule holds, the fallback slot answers.
 */
export const staticPolicySchema = z.strictObject({
  type: z.literal('static'),
  ...commonPolicyFields,
  /** Required when two rules' client subnets overlap (`first` or `most-specific`). */
  subnetOverlap: subnetOverlapSchema.optional(),
  rules: z.array(staticRuleSchema).min(1),
});

/** The selection policy of a GSLB record, by `type`. */
export const policySchema = z.discriminatedUnion('type', [staticProximityPolicySchema, staticPolicySchema, multiSourcePolicySchema]);

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
  /** DNS policies bound to this record, tried before the global `policies` (not for `static` records). */
  policies: policyBindingSchema.optional(),
  /** Cold start, tiers, all-down policy, local-first and TTL while down (src/capabilities/health/README.md). */
  health: recordHealthSchema.default(RECORD_HEALTH_DEFAULTS),
});

export type PolicyConfig = z.output<typeof policySchema>;
export type GslbRecordConfig = z.output<typeof gslbRecordSchema>;
