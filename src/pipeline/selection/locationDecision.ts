import type { CompiledDataCenter } from '../../core/model/topology.js';
import type { DcRanking } from './ranking.js';

/**
 * One step by which a stage decides from the client's location ({@link LocationReader.steps}):
 * - a rule: when `residual` holds — `true`, or the text of what still depends on the query (client
 *   subnets, the query name) once the location's tests are folded to their truths; `false`: never
 *   — and one of its data centers is available, `ranking` decides (applied to the available ones);
 *   otherwise the next step is tried;
 * - an opaque step: a decision the stage keeps whole (e.g. a `most-specific` rule list, whose
 *   winner depends on the subnets matched), compared as text and never pruned.
 */
export type DecisionStep = { readonly residual: boolean | string; readonly ranking: DcRanking } | { readonly opaque: string };

/**
 * The canonical decision of one location for a record: the steps of its location readers, in
 * pipeline order, reduced to those that can still decide. Two locations with equal keys get the
 * same answer for every health state, client subnet membership and query name, so their networks
 * may share one answer class and one ECS scope block (`answerClasses.ts`).
 *
 * Reduction, sound for every available set of data centers (every step applies only when one of
 * its data centers is available — `ranking.ts#ranksAny` in the rule lists, the live list in the
 * static-proximity stage):
 * - a rule whose residual is false never holds and is left out;
 * - a rule whose data centers all belong to earlier rules that always hold can never apply (when
 *   one of them is available, an earlier rule applied) and is left out;
 * - nothing after always-holding rules that cover every candidate can apply;
 * - when no step covers every candidate, what the record does next reads no location (a
 *   criterion ranking): one constant step stands for it.
 * Rank groups are compared over the candidates only (other data centers are never available),
 * empty groups dropped.
 * @returns the key as text: equal texts, equal decisions.
 */
export function locationDecisionKey(candidates: readonly CompiledDataCenter[], steps: readonly (readonly DecisionStep[])[]): string {
  const out: string[] = [];
  const covered = new Uint8Array(candidates.length);
  let coveredCount = 0;
  for (const list of steps) {
    for (const step of list) {
      if ('opaque' in step) {
        out.push(step.opaque);
        continue;
      }
      if (step.residual === false) continue;
      const g = rankGroups(step.ranking, candidates);
      if (g.members.every((i) => covered[i] === 1)) continue;
      out.push(`${step.residual === true ? '*' : step.residual}>${g.text}`);
      if (step.residual !== true) continue;
      for (const i of g.members) {
        if (covered[i] === 0) {
          covered[i] = 1;
          coveredCount++;
        }
      }
      if (coveredCount === candidates.length) return out.join(';');
    }
  }
  out.push('rest');
  return out.join(';');
}

/** A ranking over the candidates: `text` names its non-empty groups in order; `members` are candidate positions. */
export interface RankGroups {
  readonly text: string;
  readonly members: readonly number[];
}

/** The groups of `r` restricted to `candidates`, in rank order, empty ones dropped. */
export function rankGroups(r: DcRanking, candidates: readonly CompiledDataCenter[]): RankGroups {
  const byGroup = new Map<number, number[]>();
  candidates.forEach((dc, i) => {
    const g = r.groupOf[dc.index] ?? -1;
    if (g < 0) return;
    const list = byGroup.get(g);
    if (list) list.push(i);
    else byGroup.set(g, [i]);
  });
  const ordered = [...byGroup.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  return { text: ordered.map((g) => g.join(',')).join('|'), members: ordered.flat() };
}

/** A ranking with the data centers `keep` selects as its one group (e.g. every candidate, or rule 5's defaults). */
export function oneGroupRanking(dcs: readonly CompiledDataCenter[], keep: (dc: CompiledDataCenter) => boolean): DcRanking {
  let size = 0;
  for (const dc of dcs) if (dc.index >= size) size = dc.index + 1;
  const groupOf = new Int16Array(size).fill(-1);
  for (const dc of dcs) if (keep(dc)) groupOf[dc.index] = 0;
  return { groupOf, groupCount: 1 };
}
