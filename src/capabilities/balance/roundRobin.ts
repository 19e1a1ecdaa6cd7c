import { oneEndpointAlgorithm, type BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';

/**
 * `round-robin`: one endpoint per answer, advancing through the live endpoints in configuration
 * order with a counter per (record, DC) kept in the context's rotation store. When the live set
 * shrinks the counter is taken modulo the new size, so rotation continues over the survivors.
 */
export const roundRobinAlgorithm: BalanceAlgorithm = oneEndpointAlgorithm(
  'round-robin',
  (dc, s) => dc.endpoints[s.env.ctx.rotation.next(dc.candidate.rotationKey) % dc.endpoints.length]!,
);
