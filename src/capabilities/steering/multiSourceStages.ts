import type { MultiSourcePolicyConfig } from './multiSourcePolicySchema.js';
import { metricId } from './catalog.js';
import { parseGate } from './gateExpression.js';
import { criterionRankStage } from './criterionRank.js';
import { metricGateStage } from './metricGate.js';
import { clientHashTieBreak, pickDcsStage } from '../../pipeline/selection/pickDcs.js';
import type { Stage } from '../../pipeline/selection/stage.js';

/**
 * The stages of a `multi-source` policy (docs/PRODUCT.md §3): the metric gate (when the policy has one),
 * the criterion rank, and the pick stage with the client-network hash tie-break. The candidates,
 * health gate, balance and fallback stages are common to every policy.
 * @throws GateSyntaxError when the gate does not parse (the schema rejects such configurations).
 */
export function multiSourceStages(p: MultiSourcePolicyConfig, recordService: string): Stage[] {
  const service = p.service ?? recordService;
  const stages: Stage[] = [
    criterionRankStage({
      source: p.source,
      metric: metricId(p.source, p.metric),
      metricName: `${p.source}.${p.metric}`,
      service,
      criterion: p.criterion,
      unknown: p.unknown,
    }),
    pickDcsStage(p.pickDcCount, clientHashTieBreak),
  ];
  if (p.gate !== undefined) stages.push(metricGateStage(parseGate(p.gate), service, p.unknown));
  return stages;
}
