import { allAlgorithm } from './all.js';
import type { BalanceAlgorithm } from './balanceAlgorithm.js';
import { roundRobinAlgorithm } from './roundRobin.js';

/** Every balance algorithm by its configuration name; adding one is one file and one line here. */
export const balanceAlgorithms: ReadonlyMap<string, BalanceAlgorithm> = new Map(
  [allAlgorithm, roundRobinAlgorithm].map((a) => [a.name, a]),
);

/** Names accepted by `policy.balanceAlgorithm`. */
export const balanceAlgorithmNames: readonly string[] = [...balanceAlgorithms.keys()];
