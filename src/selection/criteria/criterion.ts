/**
 * The criterion DSL (SPEC §3; seed 004: "lowest value wins, highest value wins, value equals a
 * target, value within a margin"), one language for host, service and client metrics:
 *
 * - `lowest` / `highest`: data centers in value order; equal values form one rank group.
 * - `equals: <target>` (a number, or `up`/`down` for status): the data centers whose value is
 *   exactly the target form the only rank group; the others are ranked out.
 * - `within: <margin>, prefer: lowest|highest`: the best value by `prefer`, and every data
 *   center within the margin of it, form the first rank group (ties damp flapping between
 *   near-equal DCs); the others follow in `prefer` order, equal values tied. The margin is in
 *   the metric's own unit, or a percentage of the best value when written `"10%"`.
 */
export type Criterion =
  | { readonly kind: 'lowest' }
  | { readonly kind: 'highest' }
  | { readonly kind: 'equals'; readonly target: number; readonly word?: 'up' | 'down' }
  | { readonly kind: 'within'; readonly margin: number; readonly percent: boolean; readonly prefer: 'lowest' | 'highest' };

/** Relative slack for comparisons against a margin, so `10%` of 0.3 still includes 0.33. */
const MARGIN_EPSILON = 1e-9;

/** A data center (or anything) with the value the criterion ranks. */
export interface Ranked<T> {
  readonly item: T;
  readonly value: number;
}

/** The ranking of known values: groups best first, and what the criterion ranked out. */
export interface RankOutcome<T> {
  readonly groups: Ranked<T>[][];
  readonly rankedOut: Ranked<T>[];
}

/**
 * Ranks entries with known (non-NaN) values by a criterion. Input order breaks no ties: tied
 * entries share a group, in input order, for the pick stage's tie-break.
 */
export function rankByCriterion<T>(entries: readonly Ranked<T>[], c: Criterion): RankOutcome<T> {
  if (c.kind === 'equals') {
    const hit = entries.filter((e) => e.value === c.target);
    return { groups: hit.length > 0 ? [hit] : [], rankedOut: entries.filter((e) => e.value !== c.target) };
  }
  const ascending = c.kind === 'lowest' || (c.kind === 'within' && c.prefer === 'lowest');
  const sorted = [...entries].sort(ascending ? (a, b) => a.value - b.value : (a, b) => b.value - a.value);
  const groups: Ranked<T>[][] = [];
  let start = 0;
  if (c.kind === 'within' && sorted.length > 0) {
    const best = sorted[0]!.value;
    const margin = c.percent ? (Math.abs(best) * c.margin) / 100 : c.margin;
    const limit = margin + MARGIN_EPSILON * Math.max(1, Math.abs(best));
    while (start < sorted.length && Math.abs(sorted[start]!.value - best) <= limit) start++;
    groups.push(sorted.slice(0, start));
  }
  for (let i = start; i < sorted.length; i++) {
    const e = sorted[i]!;
    const last = groups[groups.length - 1];
    if (i > start && last && last[0]!.value === e.value) last.push(e);
    else groups.push([e]);
  }
  return { groups, rankedOut: [] };
}

/** The criterion as configured, for /explain (`lowest`, `equals 1`, `within 10% prefer lowest`). */
export function describeCriterion(c: Criterion): string {
  switch (c.kind) {
    case 'lowest':
    case 'highest':
      return c.kind;
    case 'equals':
      return `equals ${c.word ?? c.target}`;
    case 'within':
      return `within ${c.margin}${c.percent ? '%' : ''} prefer ${c.prefer}`;
  }
}
