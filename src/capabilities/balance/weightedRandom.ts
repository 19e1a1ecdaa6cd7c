import { oneEndpointAlgorithm, type BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';
import { effectiveWeight } from '../../pipeline/selection/weightPool.js';

/**
 * `weighted-random`: one live endpoint, chosen with probability weight / (sum of the live
 * endpoints' weights), from the context's random source. All-zero weights count as equal.
 */
export const weightedRandomAlgorithm: BalanceAlgorithm = oneEndpointAlgorithm('weighted-random', (dc, s) => {
  const eps = dc.endpoints;
  let total = 0;
  for (let i = 0; i < eps.length; i++) total += eps[i]!.weight;
  const sum = total === 0 ? eps.length : total;
  let r = s.env.ctx.random() * sum;
  for (let i = 0; i < eps.length - 1; i++) {
    r -= effectiveWeight(eps[i]!.weight, total);
    if (r < 0) return eps[i]!;
  }
  return eps[eps.length - 1]!;
});
