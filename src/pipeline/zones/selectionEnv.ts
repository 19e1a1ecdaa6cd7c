import type { SelectionEnv } from '../selection/stage.js';
import type { AnswerSource } from './authoritative.js';

/** Environments by context, then by a snapshot's state views; both weak, so neither side is kept alive by the cache. */
const envs = new WeakMap<SelectionEnv['ctx'], WeakMap<AnswerSource['env'], SelectionEnv>>();

/** The last pair asked for and its environment: nearly every query asks for the same pair as the one before. */
let lastViews: AnswerSource['env'] | undefined;
let lastCtx: SelectionEnv['ctx'] | undefined;
let lastEnv: SelectionEnv | undefined;

/**
 * The selection environment of a snapshot's state views and a resolve context, built once per
 * pair and shared by every query on them (queries never modify it). Keyed weakly on both: a
 * replaced snapshot or a throwaway context (`/explain` clones one per call) leaves no entry
 * behind, apart from the last pair asked for, kept so that a run of queries on one snapshot
 * costs two comparisons instead of two weak-map reads (cache-cold in a server between packets).
 */
export function selectionEnv(views: AnswerSource['env'], ctx: SelectionEnv['ctx']): SelectionEnv {
  if (views === lastViews && ctx === lastCtx) return lastEnv!;
  let byViews = envs.get(ctx);
  if (!byViews) envs.set(ctx, (byViews = new WeakMap()));
  let env = byViews.get(views);
  if (!env) byViews.set(views, (env = Object.freeze({ ...views, ctx })));
  lastViews = views;
  lastCtx = ctx;
  lastEnv = env;
  return env;
}
