import type { CompiledDataCenter } from '../core/topology.js';
import type { Condition } from '../capabilities/policies/condition.js';
import type { DcRanking } from './ranking.js';
import type { RuleList } from '../capabilities/policies/ruleList.js';

/**
 * How a record's decision reads the client's location, so that locations can be merged by the
 * decision they lead to rather than by the location inputs they show (`selection/locationClasses.ts`).
 *
 * The decision tries, in order, each rule list (the record's DNS policies, then the global ones;
 * or a static record's rules) and then its own ranking (`otherwise`). Every step ends in a
 * ranking fixed at load — an action's, a static rule's, the static-proximity ranking of the
 * client's location, or rule 5's default group — applied to the data centers available under
 * the health view of the moment.
 */
export interface DecisionShape {
  /** The record's candidates (data centers that can answer its type): no other data center is ever available. */
  readonly candidates: readonly CompiledDataCenter[];
  readonly lists: readonly RuleList[];
  /** What ranks when no rule applies. */
  readonly otherwise: Otherwise;
}

/** The ranking of a record when no rule applies. */
export type Otherwise =
  /** Static proximity: the location's ranking; an unknown location gets the `default` data centers, else every one (rule 5). */
  | { readonly kind: 'static-proximity'; readonly defaults: ReadonlySet<string> }
  /** A static record with no applicable rule: every available data center as one group. */
  | { readonly kind: 'every-available' }
  /** A ranking that reads nothing of the location (multi-source criteria). */
  | { readonly kind: 'client-independent' };

/**
 * The canonical decision of a location: two locations with equal keys get the same answer for
 * every health state, every client subnet membership and every query name, so their networks
 * may share one answer class (and one ECS scope block).
 *
 * The key is the list of the steps that can still decide, each as its residual condition (the
 * rule's condition with every `clientLocation` test replaced by its truth for this location) and
 * its rank groups over the candidates:
 * - a rule whose residual is false never holds and is left out;
 * - a step applies only when one of its data centers is available (`ruleList.ts#decidingRule`,
 *   the static-proximity stage), so a step whose data centers all belong to earlier steps that
 *   always hold can never apply and is left out, and nothing after a step set that covers every
 *   candidate can apply;
 * - a `most-specific` list is kept whole (the winner depends on the subnets matched), with
 *   location tests folded to constants but `any` branches kept, since their subnets still count
 *   towards the rule's specificity.
 * `patterns` are the truths of the record's `clientLocation` slots; `ranking` the location's
 * static-proximity ranking (null: unknown location; ignored unless `otherwise` is static proximity).
 */
export function locationDecisionKey(shape: DecisionShape, patterns: Uint8Array, ranking: DcRanking | null): string {
  const steps: string[] = [];
  const covered = new Uint8Array(shape.candidates.length);
  let coveredCount = 0;
  /** Adds a step unless it can never apply; true when the steps so far cover every candidate. */
  const step = (residual: Residual, groups: Groups): boolean => {
    if (residual === false || groups.members.every((i) => covered[i] === 1)) return false;
    steps.push(`${residual === true ? '*' : residual}>${groups.text}`);
    if (residual !== true) return false;
    for (const i of groups.members) {
      if (covered[i] === 0) {
        covered[i] = 1;
        coveredCount++;
      }
    }
    return coveredCount === covered.length;
  };
  for (const list of shape.lists) {
    if (list.overlap === 'most-specific') {
      const held: string[] = [];
      for (const rule of list.rules) {
        const residual = reduce(rule.condition, patterns, true);
        const groups = groupsOf(rule.ranking, shape.candidates);
        if (residual === false || groups.members.every((i) => covered[i] === 1)) continue;
        held.push(`${residual === true ? '*' : residual}>${groups.text}`);
      }
      if (held.length > 0) steps.push(`most-specific[${held.join(',')}]`);
      continue;
    }
    for (const rule of list.rules) if (step(reduce(rule.condition, patterns, false), groupsOf(rule.ranking, shape.candidates))) return steps.join(';');
  }
  const all = oneGroup(shape.candidates, () => true);
  switch (shape.otherwise.kind) {
    case 'static-proximity': {
      if (ranking !== null) {
        step(true, groupsOf(ranking, shape.candidates));
        break;
      }
      const defaults = shape.otherwise.defaults;
      if (step(true, oneGroup(shape.candidates, (dc) => defaults.has(dc.name)))) break;
      step(true, all);
      break;
    }
    case 'every-available':
      step(true, all);
      break;
    case 'client-independent':
      steps.push('rank');
      break;
  }
  return steps.join(';');
}

/** A stable text for a shape, for keying answer-class tables shared by records that decide alike. */
export function decisionShapeId(shape: DecisionShape): string {
  const lists = shape.lists.map((l) => `${l.overlap}{${l.rules.map((r) => `${conditionText(r.condition)}>${groupsOf(r.ranking, shape.candidates).text}`).join(',')}}`);
  const o = shape.otherwise;
  const otherwise = o.kind === 'static-proximity' ? `${o.kind}(${[...o.defaults].sort().join(',')})` : o.kind;
  return `${shape.candidates.map((c) => c.index).join(',')}|${lists.join(';')}|${otherwise}`;
}

/** A condition with its location tests decided: a constant, or the text of what still depends on the query. */
type Residual = boolean | string;

/**
 * Folds the `clientLocation` tests of `c` to their truths in `patterns`. With `keepSpecificity`
 * (most-specific lists) a true branch of `any` does not absorb its siblings, whose subnets still
 * count for the rule's specificity (`condition.ts#ConditionEvaluator`).
 */
function reduce(c: Condition, patterns: Uint8Array, keepSpecificity: boolean): Residual {
  switch (c.kind) {
    case 'always':
      return true;
    case 'location':
      return patterns[c.slot] === 1;
    case 'subnet':
    case 'qname':
      return conditionText(c);
    case 'all': {
      const parts: string[] = [];
      for (const item of c.items) {
        const r = reduce(item, patterns, keepSpecificity);
        if (r === false) return false;
        if (r !== true) parts.push(r);
      }
      return parts.length === 0 ? true : parts.length === 1 ? parts[0]! : `all(${parts.join(';')})`;
    }
    case 'any': {
      const parts: string[] = [];
      let anyTrue = false;
      for (const item of c.items) {
        const r = reduce(item, patterns, keepSpecificity);
        if (r === false) continue;
        if (r === true) {
          if (!keepSpecificity) return true;
          anyTrue = true;
        } else {
          parts.push(r);
        }
      }
      if (anyTrue) return parts.length === 0 ? true : `any(*;${parts.join(';')})`;
      return parts.length === 0 ? false : parts.length === 1 ? parts[0]! : `any(${parts.join(';')})`;
    }
    case 'not': {
      const r = reduce(c.item, patterns, keepSpecificity);
      return typeof r === 'boolean' ? !r : `not(${r})`;
    }
  }
}

/** A condition as text: `clientLocation` tests by their slot in the record's answer classes. */
function conditionText(c: Condition): string {
  switch (c.kind) {
    case 'always':
      return '*';
    case 'location':
      return `location#${c.slot}`;
    case 'subnet':
      return `subnet(${c.subnets.map((s) => s.text).join(',')})`;
    case 'qname':
      return `qname(${c.names.join(',')})`;
    case 'all':
      return `all(${c.items.map(conditionText).join(';')})`;
    case 'any':
      return `any(${c.items.map(conditionText).join(';')})`;
    case 'not':
      return `not(${conditionText(c.item)})`;
  }
}

/** A ranking over the candidates: `text` names its non-empty groups in order; `members` are candidate positions. */
interface Groups {
  readonly text: string;
  readonly members: readonly number[];
}

function groupsOf(r: DcRanking, candidates: readonly CompiledDataCenter[]): Groups {
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

function oneGroup(candidates: readonly CompiledDataCenter[], keep: (dc: CompiledDataCenter) => boolean): Groups {
  const members: number[] = [];
  candidates.forEach((dc, i) => {
    if (keep(dc)) members.push(i);
  });
  return { text: members.join(','), members };
}
