import type { SelectionEnv } from '../selection/types.js';
import type { AnswerSource } from './authoritative.js';

/** Environments by context, then by a snapshot's state views; both weak, so neither side is kept alive by the cache. */
const envs = new WeakMap<SelectionEnv['ctx'], WeakMap<AnswerSource['env'], SelectionEnv>>();

/**
 * The selection environment of a snapshot's state views and a resolve context, built once per
 * pair and shared by every query on them (queries never modify it). Keyed weakly on both: a
 * replaced snapshot or a throwaway context (`/explain` clones one per call) leaves no entry behind.
 */
export function selectionEnv(views: AnswerSource['env'], ctx: SelectionEnv['ctx']): SelectionEnv {
  let byViews = envs.get(ctx);
  if (!byViews) envs.set(ctx, (byViews = new WeakMap()));
  let env = byViews.get(views);
  if (!env) byViews.set(views, (env = Object.freeze({ ...views, ctx })));
  return env;
}
