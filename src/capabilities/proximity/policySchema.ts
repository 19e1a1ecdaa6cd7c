import { z } from 'zod';
import type { CommonPolicyShape, PolicyConfig } from '../../pipeline/config/recordSchema.js';

/**
 * `policy: {type: static-proximity}` (docs/PRODUCT.md §4): the data centers sharing the most leading location
 * qualifiers with the client win; ties go to the nearest by coordinates, then to rotation. A
 * client whose location is unknown gets the `default` data centers (all available ones when none
 * are set). It is the policy of a record that names none.
 */
export function staticProximityPolicySchema(common: CommonPolicyShape) {
  return z.strictObject({
    type: z
      .literal('static-proximity')
      .describe('Static proximity: data centers sharing the most leading location qualifiers with the client win, ties to the nearest by coordinates.'),
    ...common,
    default: z
      .array(z.string())
      .default([])
      .describe('Data center names answered to a client whose location is unknown; default none (all available data centers).'),
  });
}

/** The policy of a record that names none. */
export const DEFAULT_POLICY = { type: 'static-proximity', pickDcCount: 1, balanceAlgorithm: 'round-robin', default: [] } as const;

export type StaticProximityPolicyConfig = z.output<ReturnType<typeof staticProximityPolicySchema>>;

/** True when a record's policy is static proximity. */
export function isStaticProximity(p: PolicyConfig): p is PolicyConfig & StaticProximityPolicyConfig {
  return p.type === 'static-proximity';
}
