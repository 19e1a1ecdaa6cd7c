import type { Capability } from '../../pipeline/capability.js';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import { multiSourceStages } from './multiSourceStages.js';
import { metricsSchema } from './metricsSchema.js';
import { isMultiSource, multiSourcePolicySchema } from './multiSourcePolicySchema.js';

/**
 * Multi-source selection (seed 004, SPEC §3): host, service and client metrics pushed by agents
 * (`metrics` section, `/metrics/*` routes) and the `multi-source` selection policy that ranks
 * data centers by one of them (README.md).
 */
export const steeringCapability = {
  name: 'steering',
  schema: {
    root: {
      metrics: metricsSchema.prefault({}),
    },
    policies: (common) => [multiSourcePolicySchema(common)],
  },
  checkPolicy(policy, refs, issue) {
    if (isMultiSource(policy) && policy.service !== undefined && !refs.services.has(policy.service)) issue(['service'], `unknown service "${policy.service}"`);
  },
  stages({ record }) {
    return isMultiSource(record.policy) ? multiSourceStages(record.policy, record.service) : [];
  },
} satisfies Capability<{ readonly records: readonly GslbRecordConfig[] }>;
