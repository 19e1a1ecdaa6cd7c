import type { BalanceAlgorithm } from '../balance/balanceAlgorithm.js';
import { weightPool } from '../balance/weightPool.js';
import type { Stage } from '../types.js';

/**
 * `balance`: applies the record's balance algorithm inside each picked data center, in pick
 * order, over the data center's weight pool (weight 0 only when no positive weight is live).
 */
export function balanceStage(algorithm: BalanceAlgorithm): Stage {
  return {
    slot: 'balance',
    name: `balance:${algorithm.name}`,
    run(s) {
      const picked = s.picked;
      const pickOne = algorithm.pickOne;
      if (pickOne && !s.trace) {
        for (let i = 0; i < picked.length; i++) s.data.push(pickOne(weightPool(picked[i]!), s).data);
        s.ttl = s.record.ttl;
        return;
      }
      const perDc: { dc: string; endpoints: string[] }[] | undefined = s.trace ? [] : undefined;
      for (const dc of picked) {
        const chosen = algorithm.pick(weightPool(dc), s);
        for (const e of chosen) s.data.push(e.data);
        perDc?.push({ dc: dc.candidate.dc.name, endpoints: chosen.map((e) => e.key) });
      }
      s.ttl = s.record.ttl;
      if (s.trace) s.trace.step('balance', { algorithm: algorithm.name, perDc });
    },
  };
}
