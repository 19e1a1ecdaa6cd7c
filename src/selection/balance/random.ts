import type { BalanceAlgorithm } from './balanceAlgorithm.js';

/** `random`: one live endpoint, uniformly at random from the context's random source (weights ignored). */
export const randomAlgorithm: BalanceAlgorithm = {
  name: 'random',
  pick(dc, s) {
    return [dc.endpoints[Math.floor(s.env.ctx.random() * dc.endpoints.length)]!];
  },
};
