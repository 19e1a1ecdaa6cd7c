import { z } from 'zod';
import type { AdminRoute } from '../core/contracts/adminRoute.js';
import type { AfterAnswerHook } from '../core/contracts/frontDoor.js';
import { Engine } from '../pipeline/engine.js';
import { explainQuery, type Explanation } from '../pipeline/explain.js';
import type { Snapshot } from '../pipeline/snapshot.js';
import { whatIfSchema, type WhatIf } from './whatIfSchema.js';
import { MAX_REPLAY_QUERIES } from './whatIfLimits.js';
import { replayRowsSteps } from './replayRows.js';
import { runInSlices } from '../pipeline/selection/steps.js';

/** A hypothesis the engine could not apply (an unknown data center, endpoint or metric, a candidate outside the configuration's directory, an invalid candidate): the caller's fault, 422. */
export class WhatIfError extends Error {}

/** What the what-if routes read. */
export interface WhatIfDeps {
  readonly engine: Engine;
  /**
   * The snapshot a hypothesis gives, compiled off the query path (the composition root's
   * `src/process/counterfactuals.ts`); the empty hypothesis gives the running configuration over the live state.
   * @throws WhatIfError when the hypothesis cannot be applied.
   */
  readonly counterfactual: (w: WhatIf) => Promise<Snapshot>;
  readonly afterAnswer?: readonly AfterAnswerHook[];
}

const explainBody = z
  .object({ name: z.string().min(1), type: z.string().min(1).default('A'), client: z.string().min(1), do: z.boolean().default(false), whatIf: whatIfSchema })
  .strict();

const replayBody = z
  .object({
    whatIf: whatIfSchema,
    queries: z.array(z.object({ name: z.string().min(1), type: z.string().min(1).default('A'), client: z.string().min(1) }).strict()).max(MAX_REPLAY_QUERIES),
  })
  .strict();

/** One query's outcome in a replay: its response code and the data centers answered. */
export interface ReplayOutcome {
  readonly rcode: number;
  readonly dcs: readonly string[];
  /**
   * Set when a GSLB record's selection left no data center and its all-down fallback answered
   * (the fail-safe list, fail-open's first tier, or NODATA: `src/capabilities/health/failsafe.ts`,
   * docs/PRODUCT.md §3): that record as `name/type`. Absent otherwise.
   */
  readonly failsafe?: string;
}

/** One replayed query: live and counterfactual outcomes, or why the query could not be asked. */
export type ReplayRow = { readonly live: ReplayOutcome; readonly whatIf: ReplayOutcome } | { readonly error: string };

/**
 * The counterfactual routes (docs/PRODUCT.md §7: the decision made visible, for a state that is not
 * the live one). Both are read-only: no live state changes (health, overrides, metrics, rotation,
 * decision caches, the probe queue), so they need no token.
 * - `POST /explain/what-if` `{name, type?, client, do?, whatIf}`: `/explain`'s trace for the live
 *   state and for the hypothesis (`whatIf`, `whatIfSchema.ts`), and whether the answer changes;
 * - `POST /what-if/replay` `{whatIf, queries: [{name, type?, client}]}` (at most
 *   {@link MAX_REPLAY_QUERIES}): per query, the data centers answered by the running configuration
 *   over the live state and under the hypothesis. Both sides are compiled snapshots apart from the
 *   live one, so a replay neither fills nor clears the live decision caches.
 * 400 for a malformed body or query, 422 when the hypothesis cannot be applied.
 */
export function whatIfRoutes(deps: WhatIfDeps): AdminRoute[] {
  const { engine } = deps;
  const counterfactual = async (w: WhatIf): Promise<Snapshot | { status: number; json: unknown }> => {
    try {
      return await deps.counterfactual(w);
    } catch (e) {
      if (e instanceof WhatIfError) return { status: 422, json: { error: e.message } };
      throw e;
    }
  };
  return [
    {
      method: 'POST',
      path: '/explain/what-if',
      mutating: false,
      async handle({ body }) {
        const parsed = explainBody.safeParse(body ?? {});
        if (!parsed.success) return { status: 400, json: { error: z.prettifyError(parsed.error) } };
        const { name, type, client, whatIf } = parsed.data;
        const options = { dnssecOk: parsed.data.do, afterAnswer: deps.afterAnswer };
        let live: Explanation;
        try {
          live = explainQuery(engine, name, type, client, options);
        } catch (e) {
          return { status: 400, json: { error: (e as Error).message } };
        }
        const snap = await counterfactual(whatIf);
        if (!('generation' in snap)) return snap;
        const hypothetical = explainQuery(new Engine(snap, engine.ctx, engine.log), name, type, client, options);
        const changed = JSON.stringify(live.answer) !== JSON.stringify(hypothetical.answer);
        return { status: 200, json: { whatIf, changed, live, hypothetical } };
      },
    },
    {
      method: 'POST',
      path: '/what-if/replay',
      mutating: false,
      async handle({ body }) {
        const parsed = replayBody.safeParse(body ?? {});
        if (!parsed.success) return { status: 400, json: { error: z.prettifyError(parsed.error) } };
        const base = await counterfactual({ down: { dcs: [], endpoints: [] }, up: { dcs: [], endpoints: [] }, metrics: [] });
        if (!('generation' in base)) return base;
        const snap = await counterfactual(parsed.data.whatIf);
        if (!('generation' in snap)) return snap;
        // Rotation runs on copies: the replay advances neither the live counters nor the other side's.
        const results = await runInSlices(replayRowsSteps(base, snap, engine.ctx, parsed.data.queries));
        return { status: 200, json: { generation: engine.snapshot.generation, results } };
      },
    },
  ];
}
