import { z } from 'zod';
import { balanceAlgorithmNames } from '../../capabilities/balance/registry.js';

/** Fields every selection policy has. */
export const commonPolicyFields = {
  /** How many data centers go into an answer (SPEC §3); fewer when fewer are available. */
  pickDcCount: z.number().int().min(1).max(64).default(1),
  /** How the records inside each chosen data center are spread (SPEC §3). */
  balanceAlgorithm: z.enum(balanceAlgorithmNames as [string, ...string[]]).default('round-robin'),
};
