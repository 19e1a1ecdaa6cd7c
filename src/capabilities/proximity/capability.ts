import type { Capability } from '../../pipeline/capability.js';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import { proximityReader } from './proximityReader.js';
import { staticProximityStage } from './staticProximity.js';
import { DEFAULT_POLICY, isStaticProximity, staticProximityPolicySchema } from './policySchema.js';

/**
 * Static proximity (docs/PRODUCT.md §4; Citrix ADC static proximity): the `static-proximity` selection
 * policy, the one a record has when it names none (README.md).
 */
export const proximityCapability = {
  name: 'proximity',
  schema: {
    policies: (common) => [staticProximityPolicySchema(common)],
    defaultPolicy: DEFAULT_POLICY,
  },
  checkPolicy(policy, refs, issue) {
    if (!isStaticProximity(policy)) return;
    policy.default.forEach((dc, di) => {
      if (!refs.dataCenters.has(dc)) issue(['default', di], `unknown data center "${dc}"`);
    });
  },
  stages({ record, candidates, inputs }) {
    const policy = record.policy;
    if (!isStaticProximity(policy)) return [];
    const defaults = new Set(policy.default);
    return [
      staticProximityStage(
        defaults,
        inputs.location(
          proximityReader(
            candidates.map((c) => c.dc),
            defaults,
          ),
        ),
      ),
    ];
  },
} satisfies Capability<{ readonly records: readonly GslbRecordConfig[] }>;
