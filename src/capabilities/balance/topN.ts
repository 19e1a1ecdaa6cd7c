import { clientNetworkPrefix, clientTieBreakHash, rendezvousChoose } from '../../pipeline/selection/tieBreakHash.js';
import { narrowScope } from '../../pipeline/selection/stage.js';
import { type GslbEndpoint } from '../../core/model/topology.js';
import type { BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';

const byPriorityThenWeight = (a: GslbEndpoint, b: GslbEndpoint): number => a.priority - b.priority || b.weight - a.weight;
const tied = (a: GslbEndpoint, b: GslbEndpoint): boolean => a.priority === b.priority && a.weight === b.weight;

/**
 * `top-1`, `top-2`, `top-3` (seed 004 "top-N concentration", docs/PRODUCT.md §3): the N best endpoints of the data
 * center, ordered by priority (lower first) then weight (higher first); all of them when fewer
 * are live. Endpoints tied (same priority and weight) across the cut are chosen by the client
 * tie-break hash (tieBreakHash.ts), so one client network always gets the same ones and many
 * networks spread evenly over them; only then does the answer depend on the client network,
 * and the ECS scope narrows to its length.
 */
export function topNAlgorithm(n: number): BalanceAlgorithm {
  return {
    name: `top-${n}`,
    pick(dc, s) {
      const sorted = [...dc.endpoints].sort(byPriorityThenWeight);
      if (sorted.length <= n) return sorted;
      if (!tied(sorted[n - 1]!, sorted[n]!)) return sorted.slice(0, n);
      let start = n - 1;
      while (start > 0 && tied(sorted[start - 1]!, sorted[n - 1]!)) start--;
      let end = n + 1;
      while (end < sorted.length && tied(sorted[end]!, sorted[n - 1]!)) end++;
      narrowScope(s, clientNetworkPrefix(s));
      const chosen = rendezvousChoose(sorted.slice(start, end), n - start, clientTieBreakHash(s), (e) => e.key);
      return sorted.slice(0, start).concat(chosen);
    },
  };
}
