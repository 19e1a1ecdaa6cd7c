import type { SubnetOverlap } from './policySchema.js';
import type { Qualifiers } from '../../core/location/location.js';
import type { SelectionState } from '../../pipeline/selection/stage.js';
import { describeCondition, type Condition, type ConditionEvaluator } from './condition.js';
import { ranksAny, type DcRanking } from '../../pipeline/selection/ranking.js';

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
  /** Present when the rule held but none of its data centers is available, so it does not apply. */
  readonly skipped?: string;
  /** Longest client subnet the rule matched (most-specific mode); −1 when none. */
  readonly specificity?: number;
}

/**
 * The rule that decides, or −1 when none applies. `first`: the first true rule in order.
 * `most-specific`: every rule is evaluated and, among the true ones, the one with the longest
 * matched client subnet wins (no subnet counts as −1, below /0; equal lengths go to the earlier
 * rule). A true rule whose ranking keeps none of the available data centers (live, or demoted by
 * a gate) does not apply: a rule never makes a name vanish for some clients while others get
 * answers (NODATA is cached for every client, RFC 2308 with ECS scope 0). Verdicts are collected
 * only when `verdicts` is given (/explain).
 */
export function decidingRule(list: RuleList, s: SelectionState, ev: ConditionEvaluator, verdicts?: RuleVerdict[]): number {
  const exhaustive = list.overlap === 'most-specific';
  ev.exhaustive = exhaustive;
  let best = -1;
  let bestSpecificity = -2;
  const rules = list.rules;
  for (let i = 0; i < rules.length; i++) {
    const held = ev.test(rules[i]!.condition, s);
    const result = held && (ranksAny(s.live, rules[i]!.ranking) || ranksAny(s.demoted, rules[i]!.ranking));
    if (verdicts) {
      verdicts.push({
        rule: rules[i]!.name,
        when: describeCondition(rules[i]!.condition),
        result: held,
        ...(held && !result ? { skipped: 'none of its data centers is available' } : {}),
        ...(exhaustive ? { specificity: ev.specificity } : {}),
      });
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
