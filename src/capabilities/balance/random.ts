import { oneEndpointAlgorithm, type BalanceAlgorithm } from '../../pipeline/selection/balanceAlgorithm.js';

/** `random`: one live endpoint, uniformly at random from the context's random source (weights ignored). */
export const randomAlgorithm: BalanceAlgorithm = oneEndpointAlgorithm('random', (dc, s) => dc.endpoints[Math.floor(s.env.ctx.random() * dc.endpoints.length)]!);
