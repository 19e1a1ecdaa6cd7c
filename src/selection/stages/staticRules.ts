import { ConditionEvaluator } from '../../policies/condition.js';
import { applyRanking } from '../../policies/dcRanking.js';
import { decidingRule, type RuleList, type RuleVerdict } from '../../policies/ruleList.js';
import type { Stage } from '../types.js';

/**
 * `rank` for static records (SPEC §3 static mode): the deciding rule's data center list, in
 * priority order, restricted to the data centers that are up. No metrics are read. When no rule
 * holds, or none of its data centers is up, nothing is ranked and the fallback slot answers.
 */
export function staticRulesStage(list: RuleList): Stage {
  const ev = new ConditionEvaluator();
  return {
    slot: 'rank',
    name: 'static-rules',
    run(s) {
      ev.reset();
      const verdicts: RuleVerdict[] | undefined = s.trace ? [] : undefined;
      const i = decidingRule(list, s, ev, verdicts);
      s.ranked = i < 0 ? [] : applyRanking(s.live, list.rules[i]!.ranking);
      if (s.trace) {
        s.trace.step('static-rules', {
          subnetOverlap: list.overlap,
          evaluated: verdicts,
          matched: i < 0 ? null : list.rules[i]!.name,
          groups: s.ranked.map((g) => g.map((l) => l.candidate.dc.name)),
        });
      }
    },
  };
}
