import { z } from 'zod';
import type { Capability } from './capability.js';
import { checkCrossReferences } from './crossReferences.js';
import { commonPolicyFields, gslbRecordSchemaOf, type CommonPolicyShape } from './config/recordSchema.js';
import { dataCenterSchemaOf, endpointSchemaOf, serviceSchemaOf } from './config/topologySchema.js';
import { zoneSchema } from './config/zoneSchema.js';

/**
 * The schema of the whole configuration file, composed from the fragments of the capabilities (in
 * list order) around the query path's own sections — `zones`, `datacenters`, `services`,
 * `records` — plus `extra` top-level keys (front doors' listeners, logging). Unknown keys
 * anywhere are errors. Checks run after the schema passed: the query path's cross references
 * first, then each capability's `check`, in list order, every problem with its path.
 *
 * `keyOrder` fixes the order of the top-level keys in the schema (`gslbd schema`, and so in
 * editors); keys it does not name follow in composition order.
 * @throws Error when two fragments claim the same key, or no capability provides a policy.
 */
export function composeConfigSchema<const L extends readonly Capability<never>[], X extends z.ZodRawShape>(
  capabilities: L,
  extra: X,
  keyOrder: readonly string[],
) {
  const algorithms = capabilities.flatMap((c) => (c.balanceAlgorithms ?? []).map((a) => a.name));
  const common = commonPolicyFields(algorithms);
  const policies = capabilities.flatMap((c) => c.schema?.policies?.(common) ?? []) as unknown as PoliciesOf<L>;
  if (policies.length === 0) throw new Error('no capability provides a selection policy');
  const defaultPolicy = capabilities.find((c) => c.schema?.defaultPolicy !== undefined)?.schema?.defaultPolicy ?? {};
  const record = gslbRecordSchemaOf(policies, defaultPolicy, merged(capabilities, 'record') as ShapeOf<L, 'record'>);
  const endpoint = endpointSchemaOf(merged(capabilities, 'endpoint') as ShapeOf<L, 'endpoint'>);
  const own = {
    zones: z.array(zoneSchema).min(1).describe('The zones the engine is authoritative for, at least one.'),
    datacenters: z
      .array(dataCenterSchemaOf(merged(capabilities, 'datacenter') as ShapeOf<L, 'datacenter'>))
      .default([])
      .describe('The data centers (sites) where endpoints live; default none.'),
    services: z.array(serviceSchemaOf(endpoint)).default([]).describe('The services, each with its endpoints in data centers; default none.'),
    records: z.array(record).default([]).describe("The GSLB records, whose answers are chosen per query from a service's endpoints; default none."),
  };
  const all: Record<string, z.core.$ZodType> = {};
  const claim = (shape: z.ZodRawShape, by: string): void => {
    for (const [k, v] of Object.entries(shape)) {
      if (k in all) throw new Error(`configuration key "${k}" of ${by} is already defined`);
      all[k] = v;
    }
  };
  claim(extra, 'the composition root');
  claim(own, 'the query path');
  for (const c of capabilities) if (c.schema?.root) claim(c.schema.root, `capability ${c.name}`);
  const ordered: Record<string, z.core.$ZodType> = {};
  for (const k of keyOrder) if (k in all) ordered[k] = all[k]!;
  for (const [k, v] of Object.entries(all)) if (!(k in ordered)) ordered[k] = v;
  type Shape = typeof own & X & UnionToIntersection<RootOf<L[number]>>;
  const policyChecks = capabilities.flatMap((c) => (c.checkPolicy ? [c.checkPolicy.bind(c)] : []));
  let schema = z.strictObject(ordered as Shape).superRefine((config, ctx) => checkCrossReferences(config as never, ctx, policyChecks));
  for (const c of capabilities) {
    if (c.check) schema = schema.superRefine((config, ctx) => c.check?.(config as never, ctx));
  }
  return schema;
}

function merged(capabilities: readonly Capability<never>[], part: 'record' | 'datacenter' | 'endpoint'): z.ZodRawShape {
  const out: Record<string, z.core.$ZodType> = {};
  for (const c of capabilities) Object.assign(out, c.schema?.[part] ?? {});
  return out;
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
// Parts a capability lacks count as {} (an intersection leaves them out; `unknown` would absorb the union).
type FragmentOf<C> = C extends { readonly schema: infer F } ? F : {};
type RootOf<C> = C extends unknown ? (FragmentOf<C> extends { readonly root: infer S } ? S : {}) : never;
type PartOf<C, P extends string> = C extends unknown ? (FragmentOf<C> extends { readonly [K in P]: infer S } ? S : {}) : never;
type ShapeOf<L extends readonly unknown[], P extends string> = Extract<UnionToIntersection<PartOf<L[number], P>>, z.ZodRawShape>;
type PolicyOf<C> = C extends unknown ? (FragmentOf<C> extends { policies(common: CommonPolicyShape): readonly (infer P)[] } ? P : never) : never;
type PoliciesOf<L extends readonly unknown[]> = [PolicyOf<L[number]> & z.ZodObject, ...(PolicyOf<L[number]> & z.ZodObject)[]];
