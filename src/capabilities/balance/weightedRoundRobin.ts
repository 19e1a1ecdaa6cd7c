import type { BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';
import { effectiveWeight } from '../../pipeline/selection/weightPool.js';

/**
 * `weighted-round-robin`, smooth (nginx's algorithm, `ngx_http_upstream_get_peer` since nginx
 * 1.3.1): every answer adds each live endpoint's weight to its current weight, answers the
 * endpoint with the largest current weight (the first on a tie) and subtracts the total from it.
 * Weights 5, 1, 1 give `a a b a c a a` rather than `a a a a a b c`: the sequence is interleaved
 * and each period of sum-of-weights answers holds every endpoint exactly weight times.
 *
 * The current weights live in the context's rotation store per (record, DC), so they survive
 * reloads; they restart from zero when the set of live endpoints changes.
 */
export const weightedRoundRobinAlgorithm: BalanceAlgorithm = {
  name: 'weighted-round-robin',
  pick(dc, s) {
    const eps = dc.endpoints;
    const state = s.env.ctx.rotation.smoothWrr(dc.candidate.rotationKey);
    if (!sameMembers(state.keys, eps)) {
      state.keys = eps.map((e) => e.key);
      state.current = eps.map(() => 0);
    }
    let total = 0;
    for (let i = 0; i < eps.length; i++) total += eps[i]!.weight;
    const sum = total === 0 ? eps.length : total;
    let best = 0;
    for (let i = 0; i < eps.length; i++) {
      state.current[i]! += effectiveWeight(eps[i]!.weight, total);
      if (state.current[i]! > state.current[best]!) best = i;
    }
    state.current[best]! -= sum;
    return [eps[best]!];
  },
};

function sameMembers(keys: readonly string[], eps: readonly { key: string }[]): boolean {
  if (keys.length !== eps.length) return false;
  for (let i = 0; i < keys.length; i++) if (keys[i] !== eps[i]!.key) return false;
  return true;
}
