import { z } from 'zod';
import type { SubnetConfig } from '../../core/net/subnet.js';
import { WILDCARD } from '../../core/location/location.js';
import { domainNameSchema, locationSchema, subnetSchema } from '../../core/config/fieldSchemas.js';
import type { CommonPolicyShape, GslbRecordConfig, PolicyConfig } from '../../pipeline/config/recordSchema.js';
import { nameSchema } from '../../pipeline/config/topologySchema.js';

/**
 * Schemas of DNS policies (docs/PRODUCT.md §4, seed 002): conditions over the request, the actions they
 * select, and the bindings that order them. The behaviour lives in `src/capabilities/policies/`.
 */

/**
 * One value or a non-empty list of them, always a list after parsing (errors name the item:
 * `clientSubnet[1]`). Marked `oneOrMore` in its metadata: the JSON Schema writer
 * (`src/process/configSchema.ts`) turns it into "the item, or a list of items".
 */
const oneOrMore = <T extends z.ZodType>(item: T) => z.preprocess((v) => (Array.isArray(v) ? v : [v]), z.array(item).min(1)).meta({ oneOrMore: true });

/**
 * A condition over the request. Every key present must hold (a conjunction):
 * - `clientLocation`: the client's location matches one of these dotted patterns (`*.ZMB.*.*`);
 *   each non-wildcard qualifier must equal the client's, so an unknown client field matches only `*`;
 * - `clientSubnet`: the client address lies in one of these prefixes;
 * - `qname`: the name being answered is one of these (`*.example.test` matches names below it);
 * - `all`, `any`, `not`: combinations of conditions.
 */
export interface ConditionConfig {
  clientLocation?: z.output<typeof locationSchema>[];
  clientSubnet?: SubnetConfig[];
  qname?: string[];
  all?: ConditionConfig[];
  any?: ConditionConfig[];
  not?: ConditionConfig;
}

export const conditionSchema: z.ZodType<ConditionConfig, unknown> = z
  .strictObject({
    clientLocation: oneOrMore(locationSchema)
      .optional()
      .describe("Holds when the client's location matches one of these dotted patterns (*.ZMB.*.*); one pattern or a list."),
    clientSubnet: oneOrMore(subnetSchema)
      .optional()
      .describe('Holds when the client address lies in one of these prefixes (address/prefix bits); one or a list.'),
    qname: oneOrMore(domainNameSchema)
      .optional()
      .describe('Holds when the name answered is one of these (*.example.test matches names below it); one or a list.'),
    get all() {
      return z.array(conditionSchema).min(1).optional().describe('Holds when every one of these conditions holds.');
    },
    get any() {
      return z.array(conditionSchema).min(1).optional().describe('Holds when at least one of these conditions holds.');
    },
    get not() {
      return conditionSchema.optional().describe('Holds when this condition does not.');
    },
  })
  .refine((c) => Object.values(c).some((v) => v !== undefined), {
    message: 'a condition needs at least one of clientLocation, clientSubnet, qname, all, any, not',
  });

/**
 * How overlapping client-subnet lists of different rules in one binding are resolved:
 * `first` — rules are tried in order and the first true one wins; `most-specific` — among the
 * true rules, the one whose matched client subnet is longest wins (a rule that matched no subnet
 * counts as less specific than any subnet; equal lengths go to the earlier rule).
 */
export const subnetOverlapSchema = z.enum(['first', 'most-specific']);

/**
 * A list of DNS data centers in priority order; an inner list is a group of equals that the
 * record's pickDcCount and rotation spread over (`[dc-a, [dc-b, dc-c]]`).
 */
export const dcListSchema = z
  .array(z.union([nameSchema, z.array(nameSchema).min(1, 'a group needs at least one data center')]))
  .min(1, 'a data center list needs at least one data center');

/** A DNS policy: when `when` holds (always, when omitted), `action` decides the data centers. */
export const dnsPolicySchema = z.strictObject({
  name: nameSchema.describe('Name of the DNS policy.'),
  when: conditionSchema.optional().describe('Condition over the request (client location, client subnet, qname); absent, always.'),
  action: nameSchema.describe('Name of the action (preferred-locations or view) that decides the data centers when the condition holds.'),
});

/** An ordered list of DNS policies at one bind point (the whole configuration, or one record). */
export const policyBindingSchema = z.strictObject({
  /** Required when two rules' client subnets overlap (see {@link subnetOverlapSchema}). */
  subnetOverlap: subnetOverlapSchema
    .optional()
    .describe("Required when two rules' client subnets overlap: first (first true rule wins) or most-specific (longest matched subnet)."),
  rules: z.array(dnsPolicySchema).min(1).describe('The DNS policies in the order they are tried.'),
});

/**
 * Preferred locations (seed 002, docs/PRODUCT.md §4): up to 8 dotted locations in descending priority, matched
 * perfectly then partially against the data centers' locations.
 */
export const preferredLocationsActionSchema = z.strictObject({
  name: nameSchema.describe('Name of the action, referenced by DNS policies.'),
  type: z
    .literal('preferred-locations')
    .describe('Preferred locations: data centers matched perfectly, then partially, against these locations in priority order.'),
  locations: z
    .array(
      locationSchema.refine((q) => q.some((v) => v !== WILDCARD), {
        message: 'a preferred location needs at least one qualifier that is not *',
      }),
    )
    .min(1)
    .max(8, 'at most 8 preferred locations (seed 002)')
    .describe('Up to 8 dotted locations in descending priority, each with a qualifier that is not *.'),
});

/** A view: the answer comes from these data centers only, in priority order. */
export const viewActionSchema = z.strictObject({
  name: nameSchema.describe('Name of the action, referenced by DNS policies.'),
  type: z.literal('view').describe('View: the answer comes from these data centers only, in priority order.'),
  dcs: dcListSchema.describe('Data centers in priority order; an inner list is a group of equals ([dc-a, [dc-b, dc-c]]).'),
});

export const actionSchema = z.discriminatedUnion('type', [preferredLocationsActionSchema, viewActionSchema]);

/** One rule of a `static` record policy: when `when` holds (always, when omitted), these data centers. */
export const staticRuleSchema = z.strictObject({
  when: conditionSchema.optional().describe('Condition over the request (client location, client subnet, qname); absent, always.'),
  dcs: dcListSchema.describe('Data centers answered when the rule holds, in priority order; an inner list is a group of equals.'),
});

/**
 * `policy: {type: static}` (docs/PRODUCT.md §3 static mode): ordered rules map clients (subnet, location,
 * qname) to data center lists; no metrics and no DNS policies take part. When no rule holds, the
 * fallback slot answers.
 */
export function staticPolicySchema(common: CommonPolicyShape) {
  return z.strictObject({
    type: z.literal('static').describe('Static mode: ordered rules map clients (subnet, location, qname) to data center lists; no metrics.'),
    ...common,
    /** Required when two rules' client subnets overlap (`first` or `most-specific`). */
    subnetOverlap: subnetOverlapSchema
      .optional()
      .describe("Required when two rules' client subnets overlap: first (first true rule wins) or most-specific (longest matched subnet)."),
    rules: z.array(staticRuleSchema).min(1).describe('The static rules in order; when none holds, the fallback answers.'),
  });
}

export type StaticPolicyConfig = z.output<ReturnType<typeof staticPolicySchema>>;

/** True when a record's policy is the static mode this capability implements. */
export function isStaticPolicy(p: PolicyConfig): p is PolicyConfig & StaticPolicyConfig {
  return p.type === 'static';
}

/** A GSLB record with the key this capability adds: its own DNS policy binding. */
export interface PoliciesRecordConfig extends GslbRecordConfig {
  readonly policies?: PolicyBindingConfig | undefined;
}
export type SubnetOverlap = z.output<typeof subnetOverlapSchema>;

export type DnsPolicyConfig = z.output<typeof dnsPolicySchema>;
export type PolicyBindingConfig = z.output<typeof policyBindingSchema>;
export type ActionConfig = z.output<typeof actionSchema>;
export type StaticRuleConfig = z.output<typeof staticRuleSchema>;
