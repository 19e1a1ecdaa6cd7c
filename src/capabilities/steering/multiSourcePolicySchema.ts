import { z } from 'zod';
import { metricId, metricNames } from './catalog.js';
import type { Criterion } from './criterion.js';
import { parseGate } from './gateExpression.js';
import type { CommonPolicyShape, PolicyConfig } from '../../pipeline/config/recordSchema.js';

const MARGIN_SYNTAX = 'a margin is a number ≥ 0 in the metric\'s unit, or a percentage of the best value such as "10%"';
const CRITERION_SYNTAX = 'must be lowest, highest, {equals: <number|up|down>} or {within: <number|"N%">, prefer: lowest|highest}';

/** `lowest` | `highest` | `{equals: 3}` | `{equals: up}` | `{within: 5, prefer: lowest}` | `{within: "10%", prefer: highest}`. */
export const criterionSchema = z
  .union(
    [
      z.enum(['lowest', 'highest']),
      z.strictObject({
        equals: z
          .union([z.number(), z.enum(['up', 'down'])])
          .describe('Only the data centers whose metric is exactly this number (or up/down for status) rank; the others are ranked out.'),
      }),
      z.strictObject({
        within: z
          .union([z.number().min(0), z.string().regex(/^\d+(\.\d+)?%$/, { error: MARGIN_SYNTAX })], { error: MARGIN_SYNTAX })
          .describe(
            'Margin from the best value in the metric\'s unit, or a percentage such as "10%"; data centers within it of the best form the first rank group.',
          ),
        prefer: z.enum(['lowest', 'highest']).describe('Which end of the metric is best.'),
      }),
    ],
    { error: CRITERION_SYNTAX },
  )
  .transform((c): Criterion => {
    if (typeof c === 'string') return { kind: c };
    if ('equals' in c)
      return typeof c.equals === 'number' ? { kind: 'equals', target: c.equals } : { kind: 'equals', target: c.equals === 'up' ? 1 : 0, word: c.equals };
    const percent = typeof c.within === 'string';
    return { kind: 'within', margin: percent ? Number((c.within as string).slice(0, -1)) : (c.within as number), percent, prefer: c.prefer };
  });

/**
 * Multi-source selection (docs/PRODUCT.md §3, seed 004), per GSLB record:
 * - `source` (`host` | `service` | `client`) and `metric` (catalog.ts: e.g. `service` +
 *   `healthyBackends`, `client` + `packetLoss`) choose the signal;
 * - `service` names the service whose metrics count (default: the record's service);
 * - `criterion` ranks data centers by it (criterion.ts);
 * - `gate` (optional) filters data centers first: `host.status == up && host.cpu < 90`;
 * - `unknown` says what a missing or stale metric (or an unknown gate) means: `rank-last` keeps
 *   the data center behind every known one, `exclude` drops it;
 * - `pickDcCount` and `balanceAlgorithm` as for every policy. Tied data centers at the
 *   pickDcCount cut are chosen by a stable hash of record name and client network.
 */
export function multiSourcePolicySchema(common: CommonPolicyShape) {
  return z
    .strictObject({
      type: z.literal('multi-source').describe('Multi-source selection: data centers ranked by a pushed metric, after an optional gate.'),
      ...common,
      source: z.enum(['host', 'service', 'client']).describe('Metric source: host, service or client.'),
      metric: z.string().min(1).describe('Metric of the source that ranks the data centers (e.g. service healthyBackends, client packetLoss).'),
      service: z.string().min(1).optional().describe("Service whose metrics count; default the GSLB record's service."),
      criterion: criterionSchema.describe('How data centers rank by the metric: lowest, highest, {equals}, or {within, prefer}.'),
      gate: z
        .string()
        .superRefine((text, ctx) => {
          try {
            parseGate(text);
          } catch (e) {
            ctx.addIssue({ code: 'custom', message: (e as Error).message });
          }
        })
        .optional()
        .describe('Gate expression filtering data centers first, e.g. host.status == up && host.cpu < 90.'),
      unknown: z
        .enum(['rank-last', 'exclude'])
        .default('rank-last')
        .describe('What a missing or stale metric (or unknown gate) means: rank-last keeps the data center last, exclude drops it; default rank-last.'),
    })
    .superRefine((p, ctx) => {
      const id = metricId(p.source, p.metric);
      if (id < 0) {
        ctx.addIssue({ code: 'custom', path: ['metric'], message: `"${p.metric}" is not a ${p.source} metric (${metricNames(p.source)})` });
        return;
      }
      const isStatus = p.metric === 'status';
      const c = p.criterion;
      if (c.kind === 'equals' && isStatus !== (c.word !== undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['criterion', 'equals'],
          message: isStatus ? 'status equals up or down' : `up and down are status words; ${p.metric} is a number`,
        });
      }
      if (c.kind === 'within' && isStatus) {
        ctx.addIssue({ code: 'custom', path: ['criterion', 'within'], message: 'status is up or down; use {equals: up}' });
      }
    });
}

export type MultiSourcePolicyConfig = z.output<ReturnType<typeof multiSourcePolicySchema>>;

/** True when a record's policy is multi-source. */
export function isMultiSource(p: PolicyConfig): p is PolicyConfig & MultiSourcePolicyConfig {
  return p.type === 'multi-source';
}
