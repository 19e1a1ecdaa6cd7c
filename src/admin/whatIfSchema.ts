import { z } from 'zod';

/** Data centers (by name) and endpoints (by key, `service/dc/address`) a hypothesis sets down or up. */
const targetsSchema = z
  .object({
    dcs: z.array(z.string().min(1)).default([]),
    endpoints: z.array(z.string().regex(/^[^/]+\/[^/]+\/.+$/, 'an endpoint key is service/dc/address')).default([]),
  })
  .strict()
  .default({ dcs: [], endpoints: [] });

/**
 * One metric value as the decision would read it: a host metric of a data center, a service
 * metric of a service in a data center, or a client metric of the client network an address is in
 * (metric names of docs/PRODUCT.md §3, as `POST /metrics/*` takes them).
 */
const metricSchema = z
  .object({
    source: z.enum(['host', 'service', 'client']),
    dc: z.string().min(1),
    metric: z.string().min(1),
    value: z.number().finite(),
    /** For `service`: the service name. */
    service: z.string().min(1).optional(),
    /** For `client`: an address inside the client network. */
    client: z.string().min(1).optional(),
  })
  .strict()
  .refine((m) => (m.source === 'service') === (m.service !== undefined), { message: 'service is required for (and only for) a service metric' })
  .refine((m) => (m.source === 'client') === (m.client !== undefined), { message: 'client is required for (and only for) a client metric' });

/**
 * A hypothetical state for a counterfactual `/explain` or a what-if replay: nothing of it touches
 * the live state. `down` and `up` act as operator overrides would (force-down, force-up; a data
 * center down is every endpoint of it forced down and its `host.status` down); `metrics` replace
 * what the metric store holds; `config` is a candidate configuration file (relative to the running
 * configuration's directory, and inside it), compiled through the reload pipeline instead of the
 * running one.
 */
export const whatIfSchema = z
  .object({
    down: targetsSchema,
    up: targetsSchema,
    metrics: z.array(metricSchema).max(1000).default([]),
    config: z.string().min(1).optional(),
  })
  .strict();

/** A parsed {@link whatIfSchema}. */
export type WhatIf = z.output<typeof whatIfSchema>;

/** True when the hypothesis changes nothing (the live state and the running configuration). */
export function isEmptyWhatIf(w: WhatIf): boolean {
  return w.down.dcs.length + w.down.endpoints.length + w.up.dcs.length + w.up.endpoints.length + w.metrics.length === 0 && w.config === undefined;
}
