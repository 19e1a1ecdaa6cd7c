import type { LiveDc } from './stage.js';
import type { CompiledDataCenter } from '../../core/model/topology.js';

/** Data center names in priority order; an inner list is one group of equals (`[dc-a, [dc-b, dc-c]]`). */
export type DcListConfig = readonly (string | readonly string[])[];

/**
 * A ranking of data centers fixed at load time (by an action or a static rule), applied per
 * query to the data centers that are up: rank groups keep their order, empty groups vanish, and
 * data centers outside the ranking are left out of the answer.
 */
export interface DcRanking {
  /** Rank group of each data center by its snapshot index; −1 when it is not in the ranking. */
  readonly groupOf: Int16Array;
  readonly groupCount: number;
}

/**
 * The ranking of a data center list in priority order; an inner list is one group of equals.
 * @throws Error when a name is not in `dcs` (configuration checks prevent it).
 */
export function rankingFromDcList(list: DcListConfig, dcs: ReadonlyMap<string, CompiledDataCenter>): DcRanking {
  const groupOf = new Int16Array(dcs.size).fill(-1);
  list.forEach((entry, group) => {
    for (const name of Array.isArray(entry) ? entry : [entry]) {
      const dc = dcs.get(name);
      if (!dc) throw new Error(`unknown data center "${name}"`);
      groupOf[dc.index] = group;
    }
  });
  return { groupOf, groupCount: list.length };
}

const NONE: readonly LiveDc[] = Object.freeze([]);

/** Per ranking, the last inputs it was applied to and the result: one entry, replaced on a miss. */
const memo = new WeakMap<DcRanking, { live: readonly LiveDc[]; demoted: readonly LiveDc[]; ranked: LiveDc[][] }>();

/**
 * Rank groups of the live data centers under a ranking, best first, without empty groups; then
 * those of `demoted` (gated in with an unknown metric, docs/PRODUCT.md §3), ranked the same way after them.
 */
export function applyRanking(live: readonly LiveDc[], r: DcRanking, demoted: readonly LiveDc[] = NONE): LiveDc[][] {
  const ranked: LiveDc[][] = [];
  bucket(live, r, ranked);
  if (demoted.length > 0) bucket(demoted, r, ranked);
  return ranked;
}

/**
 * {@link applyRanking} for a ranking fixed at load (an action's, a static rule's, an answer
 * class's): when both inputs are frozen (the health gate's shared live list), the result is
 * frozen and shared by every query with the same inputs — a frozen list cannot change, so the
 * same lists give the same groups. One entry per ranking, replaced on a miss; a ranking built
 * per query must use {@link applyRanking} (it would only fill the cache).
 */
export function applySharedRanking(live: readonly LiveDc[], r: DcRanking, demoted: readonly LiveDc[] = NONE): LiveDc[][] {
  if (!Object.isFrozen(live) || !Object.isFrozen(demoted)) return applyRanking(live, r, demoted);
  const m = memo.get(r);
  if (m !== undefined && m.live === live && m.demoted === demoted) return m.ranked;
  const ranked = applyRanking(live, r, demoted);
  for (const g of ranked) Object.freeze(g);
  memo.set(r, { live, demoted, ranked: Object.freeze(ranked) as LiveDc[][] });
  return ranked;
}

function bucket(dcs: readonly LiveDc[], r: DcRanking, into: LiveDc[][]): void {
  const buckets: (LiveDc[] | undefined)[] = new Array(r.groupCount);
  for (const l of dcs) {
    const g = r.groupOf[l.candidate.dc.index]!;
    if (g < 0) continue;
    const b = buckets[g];
    if (b) b.push(l);
    else buckets[g] = [l];
  }
  for (const b of buckets) if (b) into.push(b);
}

/** True when the ranking keeps at least one of these data centers. */
export function ranksAny(dcs: readonly LiveDc[], r: DcRanking): boolean {
  for (const l of dcs) if (r.groupOf[l.candidate.dc.index]! >= 0) return true;
  return false;
}
