import type { BalanceAlgorithm } from './balanceAlgorithm.js';
import { balanceStage } from './balanceStage.js';
import { candidatesStage } from './candidatesStage.js';
import { pickDcsStage, rotationTieBreak, weightedTieBreak } from './pickDcs.js';
import type { TraceSink } from './trace.js';
import { STAGE_SLOTS, type LiveDc, type CompiledGslbRecord, type SelectionEnv, type SelectionResult, type SelectionState, type Stage } from './stage.js';
import { type Client } from '../../core/model/query.js';

/**
 * A record's pipeline: the query path's own stages — candidates, the pick (when no capability
 * contributed a pick stage: a tie at the cut split by `dcWeights` when the record has them, else
 * by rotation) and the record's balance algorithm — and the stages the
 * capabilities contributed (`contributed`, in capability order), in slot order (candidates → gate
 * → policy → rank → pick → balance → fallback). Stages of one slot keep their order (the health
 * gate before a metric gate); stages never call each other.
 */
export function assemblePipeline(
  contributed: readonly Stage[],
  algorithm: BalanceAlgorithm,
  pickDcCount: number,
  dcWeights?: Readonly<Record<string, number>>,
): Stage[] {
  const stages: Stage[] = [candidatesStage, ...contributed, sharedBalanceStage(algorithm)];
  if (!contributed.some((st) => st.slot === 'pick'))
    stages.push(dcWeights ? pickDcsStage(pickDcCount, weightedTieBreak(dcWeights)) : sharedRotationPick(pickDcCount));
  return stages.sort((x, y) => STAGE_SLOTS.indexOf(x.slot) - STAGE_SLOTS.indexOf(y.slot));
}

/**
 * Stages that hold nothing of one record, shared by every record that runs them: a stage object,
 * its `run` closure and the closure's context per record were 60,000 objects of a 20,000-record
 * snapshot, marked by each full collection of a reload (issue 17). Keyed by the balance
 * algorithm (the capabilities' constants) and by pickDcCount (a small integer): bounded.
 */
const balanceStages = new Map<BalanceAlgorithm, Stage>();
const rotationPicks = new Map<number, Stage>();

function sharedBalanceStage(algorithm: BalanceAlgorithm): Stage {
  let st = balanceStages.get(algorithm);
  if (!st) balanceStages.set(algorithm, (st = balanceStage(algorithm)));
  return st;
}

function sharedRotationPick(pickDcCount: number): Stage {
  let st = rotationPicks.get(pickDcCount);
  if (!st) rotationPicks.set(pickDcCount, (st = pickDcsStage(pickDcCount, rotationTieBreak)));
  return st;
}

const NO_DCS: readonly LiveDc[] = Object.freeze([]);
const NO_GROUPS: readonly LiveDc[][] = Object.freeze([]);

/**
 * Selects the answer of one GSLB record for one client: runs the record's pipeline over a fresh
 * working state. Pure apart from the context's random source and rotation store. `qname` is the
 * name being answered (differs from the record's name under a wildcard record).
 */
export function runSelection(record: CompiledGslbRecord, client: Client, env: SelectionEnv, trace?: TraceSink, qname: string = record.name): SelectionResult {
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
    answerType: undefined,
    delegation: undefined,
    scope: 0,
    locationPacked: -1,
    nowMs: -1,
    trace,
    clientReads: 0,
    varies: undefined,
    keyed: undefined,
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
    // A stage answered with another type (an alias): the answer is complete.
    if (s.answerType !== undefined) return;
  }
}

/** Index of the first stage after the rank slot (pick, balance, fallback): where a stored ranking resumes. */
export function afterRankIndex(pipeline: readonly Stage[]): number {
  const rank = STAGE_SLOTS.indexOf('rank');
  const i = pipeline.findIndex((stage) => STAGE_SLOTS.indexOf(stage.slot) > rank);
  return i < 0 ? pipeline.length : i;
}
