import type { RecordData } from '../../core/dns/records.js';
import type { BalanceAlgorithm } from './balanceAlgorithm.js';
import { weightPool } from './weightPool.js';
import type { Stage } from './stage.js';

const CHOICE_VARIES = 'the balance algorithm chooses among several endpoints (rotation, random draw or client input)';

/**
 * `balance`: applies the record's balance algorithm inside each picked data center, in pick
 * order, over the data center's weight pool (weight 0 only when no positive weight is live).
 * A choice among several endpoints by an algorithm that rotates, draws or reads the client
 * marks the outcome as varying (never reused by the decision cache). A pool of one endpoint is
 * answered with it without asking the algorithm, so no rotation counter, weighted round-robin
 * state or random draw moves: state moves only for outcomes that vary. Why: an outcome that does
 * not vary is computed once per decision-cache key, by whichever query (or unasked answer,
 * `ResolveContext.unasked`) comes first; had it moved state, how often it moved would depend on
 * who computed it — and a door replaying reused answers outside the engine (the fast path) would
 * leave the rotation elsewhere than a door that does not. The same data from two
 * picked data centers (one address configured in both) is answered once: an RRset never holds a
 * record twice (RFC 2181 §5).
 */
export function balanceStage(algorithm: BalanceAlgorithm): Stage {
  return {
    slot: 'balance',
    name: `balance:${algorithm.name}`,
    cacheable: true,
    run(s) {
      const picked = s.picked;
      const pickOne = algorithm.pickOne;
      if (pickOne && !s.trace) {
        for (let i = 0; i < picked.length; i++) {
          const pool = weightPool(picked[i]!);
          if (pool.endpoints.length === 1) {
            addOnce(s.data, pool.endpoints[0]!.data);
            continue;
          }
          if (!algorithm.deterministic) s.varies = CHOICE_VARIES;
          addOnce(s.data, pickOne(pool, s).data);
        }
        s.ttl = s.record.ttl;
        return;
      }
      const perDc: { dc: string; endpoints: string[] }[] | undefined = s.trace ? [] : undefined;
      for (const dc of picked) {
        const pool = weightPool(dc);
        if (pool.endpoints.length > 1 && !algorithm.deterministic) s.varies = CHOICE_VARIES;
        const chosen = pool.endpoints.length === 1 ? pool.endpoints : algorithm.pick(pool, s);
        for (const e of chosen) addOnce(s.data, e.data);
        perDc?.push({ dc: dc.candidate.dc.name, endpoints: chosen.map((e) => e.key) });
      }
      s.ttl = s.record.ttl;
      if (s.trace) s.trace.step('balance', { algorithm: algorithm.name, perDc });
    },
  };
}

/**
 * Appends `item` unless `data` already holds equal data. Addresses and names are canonical
 * (config schemas), so equal text is equal data; structured data (MX, SRV) compares field by
 * field in its fixed shape. A scan: an answer holds a few records.
 */
function addOnce(data: RecordData[], item: RecordData): void {
  if (data.length > 0) {
    const text = typeof item === 'string' ? item : JSON.stringify(item);
    for (let i = 0; i < data.length; i++) {
      const d = data[i]!;
      if (d === item || (typeof d === 'string' ? d : JSON.stringify(d)) === text) return;
    }
  }
  data.push(item);
}
