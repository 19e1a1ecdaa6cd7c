import type { BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';

/** `all`: every live endpoint of the data center, in configuration order. */
export const allAlgorithm: BalanceAlgorithm = {
  name: 'all',
  deterministic: true,
  pick: (dc) => dc.endpoints,
};
