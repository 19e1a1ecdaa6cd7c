import type { GslbEndpoint, LiveDc, SelectionState } from '../types.js';

/**
 * How the records inside one chosen data center are spread (SPEC §3 `balanceAlgorithm`).
 * One algorithm per file, registered in `registry.ts`.
 */
export interface BalanceAlgorithm {
  readonly name: string;
  /**
   * Chooses endpoints among the DC's live endpoints (never empty). May read the client, the
   * context's random source and rotation store; must not keep state of its own.
   */
  pick(dc: LiveDc, s: SelectionState): readonly GslbEndpoint[];
}
