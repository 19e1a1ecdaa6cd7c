import type { LiveDc, SelectionState } from './stage.js';
import type { GslbEndpoint } from '../../core/model/topology.js';

/**
 * How the records inside one chosen data center are spread (docs/PRODUCT.md §3 `balanceAlgorithm`).
 * One algorithm per file, registered in `registry.ts`.
 */
export interface BalanceAlgorithm {
  readonly name: string;
  /**
   * True when the choice is a function of the data center's live endpoints alone (no rotation,
   * random draw or client input), so a decision that used it may be reused (`../decisionCache.ts`).
   * Every algorithm is that when the data center has one endpoint to choose from.
   */
  readonly deterministic?: boolean;
  /**
   * Chooses endpoints among the DC's live endpoints (never empty). May read the client, the
   * context's random source and rotation store; must not keep state of its own.
   */
  pick(dc: LiveDc, s: SelectionState): readonly GslbEndpoint[];
  /**
   * Present on algorithms that always choose exactly one endpoint: that endpoint, with the same
   * draws from the context as `pick` (the balance stage calls it so no per-DC array is built).
   */
  readonly pickOne?: (dc: LiveDc, s: SelectionState) => GslbEndpoint;
}

/** An algorithm that answers one endpoint per data center, from its `pickOne`. */
export function oneEndpointAlgorithm(name: string, pickOne: (dc: LiveDc, s: SelectionState) => GslbEndpoint): BalanceAlgorithm {
  return { name, pick: (dc, s) => [pickOne(dc, s)], pickOne };
}
