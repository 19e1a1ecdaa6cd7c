import type { Qualifiers } from '../../core/location/location.js';
import { locationMatches } from '../../core/location/locationPattern.js';
import type { CompiledDataCenter } from '../../core/model/topology.js';
import { rankGroups, type DecisionStep } from '../../pipeline/selection/locationDecision.js';
import type { DcRanking } from '../../pipeline/selection/ranking.js';
import type { LocationReader, StageSlot } from '../../pipeline/selection/stage.js';
import type { Condition } from './condition.js';
import type { RuleList } from './ruleList.js';

/**
 * The location reader of a record's DNS policies or static rules (`slot`: their stage's): what they read of a location is
 * the truth of each `clientLocation` pattern list (`patterns`, by slot); the steps they decide by
 * are their rules in order, each with its condition's location tests folded to those truths.
 * `otherwise` is the ranking that decides when no rule applies and the stage itself answers it
 * (a static record: every available data center as one group); absent when a later stage does
 * (DNS policies fall through to the record's own ranking).
 */
export function policyLocationReader(
  slot: StageSlot,
  lists: readonly RuleList[],
  patterns: readonly Qualifiers[][],
  candidates: readonly CompiledDataCenter[],
  otherwise?: DcRanking,
): LocationReader {
  return {
    slot,
    id: JSON.stringify([
      patterns,
      lists.map((l) => [l.overlap, l.rules.map((r) => [conditionText(r.condition), rankGroups(r.ranking, candidates).text])]),
      otherwise && rankGroups(otherwise, candidates).text,
    ]),
    read(location) {
      let text = '';
      for (const list of patterns) text += matchesAny(list, location.qualifiers) ? '1' : '0';
      return text;
    },
    classData(location) {
      return Uint8Array.from(patterns, (list) => (matchesAny(list, location.qualifiers) ? 1 : 0));
    },
    steps(data) {
      const bits = data as Uint8Array;
      const steps: DecisionStep[] = [];
      for (const list of lists) {
        if (list.overlap === 'first') {
          for (const rule of list.rules) steps.push({ residual: reduce(rule.condition, bits, false), ranking: rule.ranking });
          continue;
        }
        // most-specific: the winner depends on the subnets each rule matched, so the list is kept
        // whole; location tests are folded, subnets (and their specificity) stay.
        const held: string[] = [];
        for (const rule of list.rules) {
          const residual = reduce(rule.condition, bits, true);
          if (residual !== false) held.push(`${residual === true ? '*' : residual}>${rankGroups(rule.ranking, candidates).text}`);
        }
        if (held.length > 0) steps.push({ opaque: `most-specific[${held.join(',')}]` });
      }
      if (otherwise) steps.push({ residual: true, ranking: otherwise });
      return steps;
    },
  };
}

function matchesAny(patterns: readonly Qualifiers[], location: Qualifiers): boolean {
  for (const p of patterns) if (locationMatches(p, location)) return true;
  return false;
}

/** A condition with its location tests decided: a constant, or the text of what still depends on the query. */
type Residual = boolean | string;

/**
 * Folds the `clientLocation` tests of `c` to their truths in `bits`. With `keepSpecificity`
 * (most-specific lists) a true branch of `any` does not absorb its siblings, whose subnets still
 * count for the rule's specificity (`condition.ts#ConditionEvaluator`).
 */
function reduce(c: Condition, bits: Uint8Array, keepSpecificity: boolean): Residual {
  switch (c.kind) {
    case 'always':
      return true;
    case 'location':
      return bits[c.slot] === 1;
    case 'subnet':
    case 'qname':
      return conditionText(c);
    case 'all': {
      const parts: string[] = [];
      for (const item of c.items) {
        const r = reduce(item, bits, keepSpecificity);
        if (r === false) return false;
        if (r !== true) parts.push(r);
      }
      return parts.length === 0 ? true : parts.length === 1 ? parts[0]! : `all(${parts.join(';')})`;
    }
    case 'any': {
      const parts: string[] = [];
      let anyTrue = false;
      for (const item of c.items) {
        const r = reduce(item, bits, keepSpecificity);
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
      const r = reduce(c.item, bits, keepSpecificity);
      return typeof r === 'boolean' ? !r : `not(${r})`;
    }
  }
}

/** A condition as text: `clientLocation` tests by their slot. */
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
