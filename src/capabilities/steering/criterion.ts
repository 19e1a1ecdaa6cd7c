/**
 * The criterion DSL (docs/PRODUCT.md §3; seed 004: "lowest value wins, highest value wins, value equals a
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

const NONE: readonly never[] = Object.freeze([]);

/**
 * Positions in value order for {@link rankByCriterion}, reused by every call: it is filled and read
 * within one call, and the query path runs each call to completion synchronously.
 */
let orderScratch = new Int32Array(16);

/** Relative slack for comparisons against a margin, so `10%` of 0.3 still includes 0.33. */
const MARGIN_EPSILON = 1e-9;

/** The ranking of known values: groups best first, and what the criterion ranked out. */
export interface RankOutcome<T> {
  readonly groups: T[][];
  readonly rankedOut: readonly T[];
}

/**
 * Ranks the first `n` of `items` (all by default) by their known (non-NaN) `values` (same
 * positions) under a criterion. Tied items share a group in input order, for the pick stage's
 * tie-break. The outcome holds new arrays, never `items` itself, so callers may reuse their
 * buffers. Query path: an insertion sort over a handful of data centers into a reused position
 * buffer, no per-item objects.
 */
export function rankByCriterion<T>(items: readonly T[], values: ArrayLike<number>, c: Criterion, n: number = items.length): RankOutcome<T> {
  if (c.kind === 'equals') {
    const hit: T[] = [];
    const out: T[] = [];
    for (let i = 0; i < n; i++) (values[i] === c.target ? hit : out).push(items[i]!);
    return { groups: hit.length > 0 ? [hit] : [], rankedOut: out };
  }
  const sign = c.kind === 'lowest' || (c.kind === 'within' && c.prefer === 'lowest') ? 1 : -1;
  // Stable insertion sort of positions: an item goes after every item it does not beat.
  if (orderScratch.length < n) orderScratch = new Int32Array(2 * n);
  const order = orderScratch;
  for (let i = 0; i < n; i++) {
    let j = i;
    while (j > 0 && sign * (values[order[j - 1]!]! - values[i]!) > 0) {
      order[j] = order[j - 1]!;
      j--;
    }
    order[j] = i;
  }
  const groups: T[][] = [];
  let k = 0;
  if (c.kind === 'within' && n > 0) {
    const best = values[order[0]!]!;
    const margin = c.percent ? (Math.abs(best) * c.margin) / 100 : c.margin;
    const limit = margin + MARGIN_EPSILON * Math.max(1, Math.abs(best));
    const first: T[] = [];
    while (k < n && Math.abs(values[order[k]!]! - best) <= limit) first.push(items[order[k++]!]!);
    groups.push(first);
  }
  for (const start = k; k < n; k++) {
    const i = order[k]!;
    if (k > start && values[order[k - 1]!] === values[i]) groups[groups.length - 1]!.push(items[i]!);
    else groups.push([items[i]!]);
  }
  return { groups, rankedOut: NONE };
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
