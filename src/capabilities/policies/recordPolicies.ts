import type { Qualifiers } from '../../core/location/location.js';
import type { RecordStageInput } from '../../pipeline/capability.js';
import { oneGroupRanking } from '../../pipeline/selection/locationDecision.js';
import { rankingFromDcList } from '../../pipeline/selection/ranking.js';
import type { Stage, StageSlot } from '../../pipeline/selection/stage.js';
import { compileCondition, type ConditionInputs } from './condition.js';
import { dnsPolicyStage } from './dnsPolicy.js';
import { policyLocationReader } from './locationSteps.js';
import { preferredLocationsRanking } from './preferredLocations.js';
import { isStaticPolicy, type ActionConfig, type PoliciesRecordConfig, type PolicyBindingConfig } from './policySchema.js';
import type { PolicyRule, RuleList } from './ruleList.js';
import { staticRulesStage } from './staticRules.js';

/** The parts of the configuration a record's policies read. */
export interface PoliciesConfig {
  readonly records: readonly PoliciesRecordConfig[];
  /** The global binding (`policies:`), if any. */
  readonly policies?: PolicyBindingConfig | undefined;
  readonly actions: readonly ActionConfig[];
}

/**
 * The policy-driven stages of a record: for a `static` record its rules (rank slot); otherwise a
 * DNS-policy stage over the record's own binding then the global one (policy slot), or nothing
 * when neither exists. Rankings are fixed here, per record, since they depend only on locations
 * and names. Their `clientLocation` tests are registered as one location reader (answer classes),
 * their client subnets and query-name tests with the record's client inputs.
 * @throws Error when a reference is broken (configuration checks prevent it).
 */
export function policyStages(input: RecordStageInput<PoliciesConfig>): Stage[] {
  const rec = input.record as PoliciesRecordConfig;
  const p = rec.policy;
  const inputs: ConditionInputs = { locations: [], client: input.inputs };
  const candidates = input.candidates.map((c) => c.dc);
  if (isStaticPolicy(p)) {
    const rules = p.rules.map((r, i) => ({
      name: `rules[${i}]`,
      condition: compileCondition(r.when, inputs),
      ranking: rankingFromDcList(r.dcs, input.dcByName),
    }));
    const list: RuleList = { bindPoint: 'static', overlap: p.subnetOverlap ?? 'first', rules };
    const reader = registerReader(
      input,
      'rank',
      [list],
      inputs.locations,
      oneGroupRanking(candidates, () => true),
    );
    return [staticRulesStage(list, reader)];
  }
  const actions = new Map(input.config.actions.map((a) => [a.name, a]));
  const lists: RuleList[] = [];
  if (rec.policies) lists.push(compileBinding('record', rec.policies, input, actions, inputs));
  if (input.config.policies) lists.push(compileBinding('global', input.config.policies, input, actions, inputs));
  if (lists.length === 0) return [];
  return [dnsPolicyStage(lists, registerReader(input, 'policy', lists, inputs.locations))];
}

/** The location reader of the lists, when their conditions test the location; its index, else −1. */
function registerReader(
  input: RecordStageInput<PoliciesConfig>,
  slot: StageSlot,
  lists: readonly RuleList[],
  patterns: Qualifiers[][],
  otherwise?: ReturnType<typeof oneGroupRanking>,
): number {
  if (patterns.length === 0) return -1;
  return input.inputs.location(
    policyLocationReader(
      slot,
      lists,
      patterns,
      input.candidates.map((c) => c.dc),
      otherwise,
    ),
  );
}

function compileBinding(
  bindPoint: 'record' | 'global',
  b: PolicyBindingConfig,
  input: RecordStageInput<PoliciesConfig>,
  actions: ReadonlyMap<string, ActionConfig>,
  inputs: ConditionInputs,
): RuleList {
  return {
    bindPoint,
    overlap: b.subnetOverlap ?? 'first',
    rules: b.rules.map((r): PolicyRule => {
      const action = actions.get(r.action);
      if (!action) throw new Error(`unknown action "${r.action}"`);
      const base = { name: r.name, condition: compileCondition(r.when, inputs), action: { name: action.name, type: action.type } };
      return action.type === 'preferred-locations'
        ? { ...base, preferred: action.locations, ranking: preferredLocationsRanking(action.locations, input.dataCenters) }
        : { ...base, ranking: rankingFromDcList(action.dcs, input.dcByName) };
    }),
  };
}
