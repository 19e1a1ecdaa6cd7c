import type { SubnetOverlap } from '../config/policySchema.js';
import type { Qualifiers } from '../geo/location.js';
import type { SelectionState } from '../selection/types.js';
import { describeCondition, type Condition, type ConditionEvaluator } from './condition.js';
import type { DcRanking } from './dcRanking.js';

/** One rule compiled for one record: a condition and the ranking its action gives that record. */
export interface PolicyRule {
  /** The DNS policy's name, or `rules[i]` in a static record. */
  readonly name: string;
  readonly condition: Condition;
  /** The action's name and type (DNS policies); absent for static rules. */
  readonly action?: { readonly name: string; readonly type: 'preferred-locations' | 'view' };
  /** Preferred locations in priority order, for /explain. */
  readonly preferred?: readonly Qualifiers[];
  readonly ranking: DcRanking;
}

/** An ordered list of rules at one bind point, with its overlap rule. */
export interface RuleList {
  readonly bindPoint: 'record' | 'global' | 'static';
  readonly overlap: SubnetOverlap;
  readonly rules: readonly PolicyRule[];
}

/** What /explain shows for one evaluated rule. */
export interface RuleVerdict {
  readonly rule: string;
  readonly when: unknown;
  readonly result: boolean;
  /** Longest client subnet the rule matched (most-specific mode); −1 when none. */
  readonly specificity?: number;
}

/**
 * The rule that decides, or −1 when none holds. `first`: the first true rule in order.
 * `most-specific`: every rule is evaluated and, among the true ones, the one with the longest
 * matched client subnet wins (no subnet counts as −1, below /0; equal lengths go to the earlier
 * rule). Verdicts are collected only when `verdicts` is given (/explain).
 */
export function decidingRule(list: RuleList, s: SelectionState, ev: ConditionEvaluator, verdicts?: RuleVerdict[]): number {
  const exhaustive = list.overlap === 'most-specific';
  ev.exhaustive = exhaustive;
  let best = -1;
  let bestSpecificity = -2;
  const rules = list.rules;
  for (let i = 0; i < rules.length; i++) {
    const result = ev.test(rules[i]!.condition, s);
    if (verdicts) {
      verdicts.push({ rule: rules[i]!.name, when: describeCondition(rules[i]!.condition), result, ...(exhaustive ? { specificity: ev.specificity } : {}) });
    }
    if (!result) continue;
    if (!exhaustive) return i;
    if (ev.specificity > bestSpecificity) {
      best = i;
      bestSpecificity = ev.specificity;
    }
  }
  return best;
}
