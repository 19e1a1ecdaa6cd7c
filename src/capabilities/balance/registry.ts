import { allAlgorithm } from './all.js';
import type { BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';
import { nearestAlgorithm } from './nearest.js';
import { randomAlgorithm } from './random.js';
import { roundRobinAlgorithm } from './roundRobin.js';
import { topNAlgorithm } from './topN.js';
import { weightedRandomAlgorithm } from './weightedRandom.js';
import { weightedRoundRobinAlgorithm } from './weightedRoundRobin.js';

/**
 * Every balance algorithm, in the order `policy.balanceAlgorithm` lists their names; adding one is
 * one file and one line here.
 */
export const BALANCE_ALGORITHMS: readonly BalanceAlgorithm[] = [
  allAlgorithm,
  roundRobinAlgorithm,
  topNAlgorithm(1),
  topNAlgorithm(2),
  topNAlgorithm(3),
  weightedRoundRobinAlgorithm,
  randomAlgorithm,
  weightedRandomAlgorithm,
  nearestAlgorithm,
];
