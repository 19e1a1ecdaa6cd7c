import type { Capability } from '../../pipeline/capability.js';
import { BALANCE_ALGORITHMS } from './registry.js';

/**
 * The balance algorithms (docs/PRODUCT.md §3 `balanceAlgorithm`): how the endpoints inside each chosen data
 * center are spread. One file per algorithm, one line in `registry.ts`.
 */
export const balanceCapability = {
  name: 'balance',
  balanceAlgorithms: BALANCE_ALGORITHMS,
} satisfies Capability;
