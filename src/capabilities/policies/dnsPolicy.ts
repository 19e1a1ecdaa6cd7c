import { formatQualifiers } from '../../core/location/location.js';
import { ConditionEvaluator } from './condition.js';
import { applySharedRanking } from '../../pipeline/selection/ranking.js';
import { matchPreferred } from './preferredLocations.js';
import { decidingRule, type PolicyRule, type RuleList, type RuleVerdict } from './ruleList.js';
import type { LiveDc, SelectionState, Stage } from '../../pipeline/selection/stage.js';

/**
 * `policy`: DNS policies (docs/PRODUCT.md §4, seed 002). The record's own rules are tried first, then the
 * global ones; in each list the overlap rule picks the deciding policy. Its action fixes the rank
 * groups (preferred locations, or a view's data centers; data centers a gate demoted follow, ranked
 * alike) and the rank stages are skipped. When no policy applies (none holds, or the ones that
 * hold have no available data center), nothing changes and the record's own ranking (static
 * proximity, multi-source criteria, …) runs.
 * `reader` is the index of the policies' location reader in the record's answer classes (−1: none).
 */
export function dnsPolicyStage(lists: readonly RuleList[], reader: number): Stage {
  const ev = new ConditionEvaluator(reader);
  return {
    slot: 'policy',
    name: 'dns-policy',
    cacheable: true,
    run(s) {
      ev.reset();
      const evaluated: { bindPoint: string; subnetOverlap: string; policies: RuleVerdict[] }[] | undefined = s.trace ? [] : undefined;
      for (const list of lists) {
        const verdicts: RuleVerdict[] | undefined = evaluated ? [] : undefined;
        evaluated?.push({ bindPoint: list.bindPoint, subnetOverlap: list.overlap, policies: verdicts! });
        const i = decidingRule(list, s, ev, verdicts);
        if (i < 0) continue;
        const rule = list.rules[i]!;
        s.ranked = applySharedRanking(s.live, rule.ranking, s.demoted);
        s.rankedByPolicy = true;
        if (s.trace) s.trace.step('dns-policy', { evaluated, matched: rule.name, action: rule.action, ...actionDetail(rule, s) });
        return;
      }
      if (s.trace) s.trace.step('dns-policy', { evaluated, matched: null });
    },
  };
}

/**
 * For /explain: each preferred location with perfect/partial/no per data center and whether the
 * data center is up, and the rank groups the action produced.
 */
function actionDetail(rule: PolicyRule, s: SelectionState): Record<string, unknown> {
  const up = new Set(s.live.map((l) => l.candidate.dc.name));
  const groups = s.ranked.map((g: LiveDc[]) => g.map((l) => l.candidate.dc.name));
  if (!rule.preferred) return { groups };
  const n = rule.preferred.length;
  const first = s.ranked[0]?.[0];
  const g = first ? rule.ranking.groupOf[first.candidate.dc.index]! : -1;
  return {
    preferredLocations: rule.preferred.map((p) => ({
      location: formatQualifiers(p),
      services: Object.fromEntries(s.record.candidates.map((c) => [c.dc.name, { match: matchPreferred(p, c.dc.qualifiers), up: up.has(c.dc.name) }])),
    })),
    decidedBy:
      g < 0
        ? 'no data center is up'
        : g < n
          ? `perfect match for ${formatQualifiers(rule.preferred[g]!)}`
          : g < 2 * n
            ? `partial match for ${formatQualifiers(rule.preferred[g - n]!)}`
            : 'no perfect or partial match is up: every other up data center',
    groups,
  };
}
