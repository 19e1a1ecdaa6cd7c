import type { PolicyConfig } from './config/recordSchema.js';
import { balanceAlgorithms } from '../capabilities/balance/registry.js';
import { balanceStage } from './stages/balance.js';
import { candidatesStage } from './stages/candidates.js';
import { failsafeStage } from '../capabilities/health/failsafe.js';
import { healthGateStage } from '../capabilities/health/healthGate.js';
import { multiSourceStages } from '../capabilities/steering/multiSourceStages.js';
import { pickDcsStage, rotationTieBreak } from './stages/pickDcs.js';
import { staticProximityStage } from '../capabilities/proximity/staticProximity.js';
import type { TraceSink } from './trace.js';
import { STAGE_SLOTS, type LiveDc, type CompiledGslbRecord, type SelectionEnv, type SelectionResult, type SelectionState, type Stage } from './stage.js';
import { type Client } from '../core/query.js';

/**
 * Builds a record's pipeline from its policy: one stage per slot it needs, in slot order
 * (candidates → gate → policy → rank → pick → balance → fallback). A capability adds a stage by
 * returning it here for the policies that use it; stages never call each other. Stages of one
 * slot run in the order they are listed (the health gate before a metric gate). `policyStages`
 * are the record's DNS-policy or static-rule stages (`src/capabilities/policies/recordPolicies.ts`);
 * `recordService` is the record's service (multi-source service metrics default to it).
 * @throws Error when the policy names an unknown balance algorithm (the schema prevents it).
 */
export function buildPipeline(policy: PolicyConfig, rotationKeyPrefix: string, policyStages: readonly Stage[] = [], recordService = ''): Stage[] {
  const algorithm = balanceAlgorithms.get(policy.balanceAlgorithm);
  if (!algorithm) throw new Error(`unknown balance algorithm "${policy.balanceAlgorithm}"`);
  const stages: Stage[] = [candidatesStage, healthGateStage, ...policyStages, balanceStage(algorithm), failsafeStage];
  if (policy.type === 'multi-source') stages.push(...multiSourceStages(policy, recordService));
  else stages.push(pickDcsStage(policy.pickDcCount, rotationTieBreak(`${rotationKeyPrefix}/pick`)));
  if (policy.type === 'static-proximity') stages.push(staticProximityStage(new Set(policy.default)));
  return stages.sort((a, b) => STAGE_SLOTS.indexOf(a.slot) - STAGE_SLOTS.indexOf(b.slot));
}

const NO_DCS: readonly LiveDc[] = Object.freeze([]);
const NO_GROUPS: readonly LiveDc[][] = Object.freeze([]);

/**
 * Selects the answer of one GSLB record for one client: runs the record's pipeline over a fresh
 * working state. Pure apart from the context's random source and rotation store. `qname` is the
 * name being answered (differs from the record's name under a wildcard record).
 */
export function runSelection(
  record: CompiledGslbRecord,
  client: Client,
  env: SelectionEnv,
  trace?: TraceSink,
  qname: string = record.name,
): SelectionResult {
  const s = runStages(record, client, env, trace, qname);
  return { data: s.data, ttl: s.ttl, scope: s.scope, dcs: s.picked.map((l) => l.candidate.dc.name) };
}

/**
 * {@link runSelection} without building its result: the working state after the last stage, for
 * the query path, which copies `data`, `ttl`, `scope` and the names of `picked` straight into
 * the answer. Rank-slot stages are skipped when a DNS policy already fixed the ranking.
 */
export function runStages(record: CompiledGslbRecord, client: Client, env: SelectionEnv, trace: TraceSink | undefined, qname: string): SelectionState {
  const s = selectionState(record, client, env, trace, qname);
  runPipeline(s, 0, record.pipeline.length);
  return s;
}

/** A fresh working state for one selection, before any stage ran. */
export function selectionState(record: CompiledGslbRecord, client: Client, env: SelectionEnv, trace: TraceSink | undefined, qname: string): SelectionState {
  return {
    record,
    client,
    env,
    qname,
    // Stages replace these (never fill them): frozen empties until they do.
    live: NO_DCS as LiveDc[],
    demoted: NO_DCS,
    ranked: NO_GROUPS as LiveDc[][],
    rankedByPolicy: false,
    picked: NO_DCS as LiveDc[],
    data: [],
    ttl: record.ttl,
    scope: 0,
    locationPacked: -1,
    nowMs: -1,
    trace,
    clientReads: 0,
    varies: undefined,
    // Set by the health gate; present from the start so every state has the same shape.
    availability: undefined,
  };
}

/**
 * Runs the record's stages `from` (inclusive) to `to` (exclusive) over `s`; rank-slot stages are
 * skipped when a DNS policy already fixed the ranking. The decision cache resumes a stored
 * ranking this way (`decisionCache.ts`).
 */
export function runPipeline(s: SelectionState, from: number, to: number): void {
  const pipeline = s.record.pipeline;
  for (let i = from; i < to; i++) {
    const stage = pipeline[i]!;
    if (s.rankedByPolicy && stage.slot === 'rank') continue;
    stage.run(s);
  }
}

/** Index of the first stage after the rank slot (pick, balance, fallback): where a stored ranking resumes. */
export function afterRankIndex(pipeline: readonly Stage[]): number {
  const rank = STAGE_SLOTS.indexOf('rank');
  const i = pipeline.findIndex((stage) => STAGE_SLOTS.indexOf(stage.slot) > rank);
  return i < 0 ? pipeline.length : i;
}
