import { ConditionEvaluator } from './condition.js';
import { applySharedRanking } from '../../pipeline/selection/ranking.js';
import { decidingRule, type RuleList, type RuleVerdict } from './ruleList.js';
import type { LiveDc, SelectionState, Stage } from '../../pipeline/selection/stage.js';

/**
 * `rank` for static records (docs/PRODUCT.md §3 static mode): the deciding rule's data center list, in
 * priority order, restricted to the data centers that are up. No metrics are read. A rule none of
 * whose data centers is up does not apply (the next one is tried); when no rule applies, every
 * available data center answers as one group, so the name never vanishes for some clients while
 * others get answers. Only a record with nothing up reaches the all-down policy (fallback slot).
 * `reader` is the index of the rules' location reader in the record's answer classes (−1: none).
 */
export function staticRulesStage(list: RuleList, reader: number): Stage {
  const ev = new ConditionEvaluator(reader);
  return {
    slot: 'rank',
    name: 'static-rules',
    cacheable: true,
    run(s) {
      ev.reset();
      const verdicts: RuleVerdict[] | undefined = s.trace ? [] : undefined;
      const i = decidingRule(list, s, ev, verdicts);
      s.ranked = i >= 0 ? applySharedRanking(s.live, list.rules[i]!.ranking, s.demoted) : everyAvailable(s);
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

/** Every available data center as one group (live, then demoted ones), or nothing when none is. */
function everyAvailable(s: SelectionState): LiveDc[][] {
  const ranked: LiveDc[][] = [];
  if (s.live.length > 0) ranked.push([...s.live]);
  if (s.demoted.length > 0) ranked.push([...s.demoted]);
  return ranked;
}
