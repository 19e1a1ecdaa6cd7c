import type { ActionConfig, PolicyBindingConfig } from './policySchema.js';
import type { GslbRecordConfig } from '../../pipeline/config/recordSchema.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import { dnsPolicyStage } from './dnsPolicy.js';
import { staticRulesStage } from './staticRules.js';
import type { Stage } from '../../pipeline/stage.js';
import type { CompiledDataCenter } from '../../core/topology.js';
import { compileCondition, conditionInputs, type ConditionInputs } from './condition.js';
import { rankingFromDcList } from '../../pipeline/ranking.js';
import { preferredLocationsRanking } from './preferredLocations.js';
import type { PolicyRule, RuleList } from './ruleList.js';

/** What compiling a record's policies needs from the snapshot being built. */
export interface PolicyContext {
  /** The global binding (`policies:`), if any. */
  readonly global: PolicyBindingConfig | undefined;
  readonly actions: ReadonlyMap<string, ActionConfig>;
  /** Every data center of the snapshot; `index` is the position. */
  readonly dataCenters: readonly CompiledDataCenter[];
  readonly dcByName: ReadonlyMap<string, CompiledDataCenter>;
  /** The location database the snapshot answers with (for the records' answer classes). */
  readonly geo?: LocationDb;
}

/** A record's policy stages and the inputs their conditions read (`clientLocation` pattern lists by slot, client subnets, the query name). */
export interface RecordPolicyStages {
  readonly stages: Stage[];
  readonly inputs: ConditionInputs;
  /** The rule lists the stages try, in order (for merging locations by decision: `locationDecision.ts`). */
  readonly lists: readonly RuleList[];
}

/**
 * The policy-driven stages of a record: for a `static` record its rules (rank slot); otherwise a
 * DNS-policy stage over the record's own binding then the global one (policy slot), or nothing
 * when neither exists. Rankings are fixed here, per record, since they depend only on locations
 * and names.
 * @throws Error when a reference is broken (configuration checks prevent it).
 */
export function policyStagesFor(rec: GslbRecordConfig, ctx: PolicyContext): RecordPolicyStages {
  const p = rec.policy;
  const inputs = conditionInputs();
  if (p.type === 'static') {
    const rules = p.rules.map((r, i) => ({
      name: `rules[${i}]`,
      condition: compileCondition(r.when, inputs),
      ranking: rankingFromDcList(r.dcs, ctx.dcByName),
    }));
    const list: RuleList = { bindPoint: 'static', overlap: p.subnetOverlap ?? 'first', rules };
    return { stages: [staticRulesStage(list)], inputs, lists: [list] };
  }
  const lists: RuleList[] = [];
  if (rec.policies) lists.push(compileBinding('record', rec.policies, ctx, inputs));
  if (ctx.global) lists.push(compileBinding('global', ctx.global, ctx, inputs));
  return { stages: lists.length > 0 ? [dnsPolicyStage(lists)] : [], inputs, lists };
}

function compileBinding(bindPoint: 'record' | 'global', b: PolicyBindingConfig, ctx: PolicyContext, inputs: ConditionInputs): RuleList {
  return {
    bindPoint,
    overlap: b.subnetOverlap ?? 'first',
    rules: b.rules.map((r): PolicyRule => {
      const action = ctx.actions.get(r.action);
      if (!action) throw new Error(`unknown action "${r.action}"`);
      const base = { name: r.name, condition: compileCondition(r.when, inputs), action: { name: action.name, type: action.type } };
      return action.type === 'preferred-locations'
        ? { ...base, preferred: action.locations, ranking: preferredLocationsRanking(action.locations, ctx.dataCenters) }
        : { ...base, ranking: rankingFromDcList(action.dcs, ctx.dcByName) };
    }),
  };
}
