import { z } from 'zod';
import type { Capability } from '../../pipeline/capability.js';
import { checkPolicyReferences } from './policyReferences.js';
import { policyStages, type PoliciesConfig } from './recordPolicies.js';
import { actionSchema, policyBindingSchema, staticPolicySchema } from './policySchema.js';

/**
 * DNS policies, views and static rules (seed 002, docs/PRODUCT.md §3–4): the global `policies` binding and
 * `actions`, each record's own `policies`, and the `static` selection policy (README.md).
 */
export const policiesCapability = {
  name: 'policies',
  schema: {
    root: {
      /** DNS policies bound globally: tried for every non-static GSLB record after the record's own. */
      policies: policyBindingSchema.optional().describe("DNS policies bound globally: tried for every non-static GSLB record after the record's own."),
      actions: z.array(actionSchema).default([]).describe('The actions DNS policies select: preferred-locations or view; default none.'),
    },
    record: {
      /** DNS policies bound to this record, tried before the global `policies` (not for `static` records). */
      policies: policyBindingSchema.optional().describe('DNS policies bound to this GSLB record, tried before the global policies (not for static records).'),
    },
    policies: (common) => [staticPolicySchema(common)],
  },
  check: checkPolicyReferences,
  stages: policyStages,
} satisfies Capability<Parameters<typeof checkPolicyReferences>[0] & PoliciesConfig>;
