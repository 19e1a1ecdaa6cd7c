import type { SubnetConfig } from '../../core/net/subnet.js';
import { asciiLower } from '../../core/dns/name.js';
import { formatQualifiers, type Qualifiers } from '../../core/location/location.js';
import { locationMatches } from '../../core/location/locationPattern.js';
import { membershipScope, subnetMembership } from '../../core/net/subnet.js';
import { classData } from '../../pipeline/selection/answerClasses.js';
import { clientLocation } from '../../pipeline/selection/clientLocation.js';
import { narrowScope, subnetReadBit, type ClientInputs, type SelectionState } from '../../pipeline/selection/stage.js';
import type { ConditionConfig } from './policySchema.js';

export { locationMatches };

/** A compiled condition over the request (see `conditionSchema` for the configuration form). */
export type Condition =
  | { readonly kind: 'always' }
  | {
      readonly kind: 'location';
      readonly patterns: readonly Qualifiers[];
      /** Index of these patterns in the policies' location reader; −1: match the location itself. */
      readonly slot: number;
    }
  | {
      readonly kind: 'subnet';
      readonly subnets: readonly SubnetConfig[];
      /** Position of the first of these subnets in the record's client inputs; −1: not collected. */
      readonly firstSlot: number;
    }
  | { readonly kind: 'qname'; readonly names: readonly string[] }
  | { readonly kind: 'all'; readonly items: readonly Condition[] }
  | { readonly kind: 'any'; readonly items: readonly Condition[] }
  | { readonly kind: 'not'; readonly item: Condition };

export const ALWAYS: Condition = { kind: 'always' };

/** What a record's conditions read, collected while they are compiled. */
export interface ConditionInputs {
  /** `clientLocation` pattern lists, one per slot of the policies' location reader (`locationSteps.ts`). */
  readonly locations: Qualifiers[][];
  /** Where the client subnets and query-name reads are registered for the decision cache. */
  readonly client: ClientInputs;
}

/**
 * Compiles a configured condition; every key of one object must hold (a conjunction). With
 * `inputs`, each `clientLocation` list takes the next slot of the policies' location reader
 * (read from the client's answer class at query time), each `clientSubnet` list is registered
 * with the record's client inputs (its read bits), and a `qname` test is noted.
 */
export function compileCondition(c: ConditionConfig | undefined, inputs?: ConditionInputs): Condition {
  if (!c) return ALWAYS;
  const sub = (x: ConditionConfig): Condition => compileCondition(x, inputs);
  const items: Condition[] = [];
  if (c.clientLocation) {
    const slot = inputs ? inputs.locations.push(c.clientLocation) - 1 : -1;
    items.push({ kind: 'location', patterns: c.clientLocation, slot });
  }
  if (c.clientSubnet) {
    const firstSlot = inputs ? inputs.client.subnets(c.clientSubnet) : -1;
    items.push({ kind: 'subnet', subnets: c.clientSubnet, firstSlot });
  }
  if (c.qname) {
    inputs?.client.qname();
    items.push({ kind: 'qname', names: c.qname });
  }
  if (c.all) items.push({ kind: 'all', items: c.all.map(sub) });
  if (c.any) items.push({ kind: 'any', items: c.any.map(sub) });
  if (c.not) items.push({ kind: 'not', item: sub(c.not) });
  return items.length === 1 ? items[0]! : { kind: 'all', items };
}

/** True when `qname` (canonical) is `name`, or lies strictly below `x` for a name `*.x`. */
export function qnameMatches(name: string, qname: string): boolean {
  if (name === '*') return true;
  if (name.startsWith('*.')) return qname.length > name.length - 1 && qname.endsWith(name.slice(1));
  return qname === name;
}

/**
 * Evaluates conditions for one selection. Every client-derived input it reads narrows the ECS
 * scope (docs/PRODUCT.md §8): the location by its block in the record's answer classes (or in the location
 * table when the record has none), each client subnet it tests
 * by the largest block around the client in which that membership is constant. Only inputs
 * actually read count: inside the resulting block every one of them has the same value, so the
 * same evaluation path gives the same result.
 *
 * One evaluator per stage is reused across queries (queries run to completion synchronously).
 */
export class ConditionEvaluator {
  /**
   * @param reader index of the policies' location reader in the record's answer classes
   *   (`ClientInputs.location`); −1 when the conditions were compiled without one.
   */
  constructor(private readonly reader = -1) {}

  /** Longest client subnet a true condition matched outside `not`; −1 when none. */
  specificity = -1;
  /** Evaluate every subnet and every `any` branch, so {@link specificity} is exact (most-specific mode). */
  exhaustive = false;
  private lowerQname: string | undefined;

  /** Starts a new selection: forgets the cached query name. */
  reset(): void {
    this.lowerQname = undefined;
  }

  /** Evaluates `c` for the selection `s` (its client, location and query name). */
  test(c: Condition, s: SelectionState): boolean {
    this.specificity = -1;
    return this.eval(c, s, true);
  }

  private eval(c: Condition, s: SelectionState, positive: boolean): boolean {
    switch (c.kind) {
      case 'always':
        return true;
      case 'location': {
        const bits = c.slot >= 0 && this.reader >= 0 ? classData<Uint8Array>(s, this.reader) : undefined;
        if (bits) return bits[c.slot] === 1;
        const { location } = clientLocation(s);
        for (const p of c.patterns) if (locationMatches(p, location.qualifiers)) return true;
        return false;
      }
      case 'subnet':
        return this.subnet(c.subnets, c.firstSlot, s, positive);
      case 'qname': {
        this.lowerQname ??= canonicalQname(s.qname);
        for (const n of c.names) if (qnameMatches(n, this.lowerQname)) return true;
        return false;
      }
      case 'all':
        for (const item of c.items) if (!this.eval(item, s, positive)) return false;
        return true;
      case 'any': {
        let any = false;
        for (const item of c.items) {
          const saved = this.specificity;
          if (this.eval(item, s, positive)) {
            any = true;
            if (!this.exhaustive) return true;
          } else {
            this.specificity = saved;
          }
        }
        return any;
      }
      case 'not': {
        const saved = this.specificity;
        const v = !this.eval(c.item, s, false);
        this.specificity = saved;
        return v;
      }
    }
  }

  private subnet(subnets: readonly SubnetConfig[], firstSlot: number, s: SelectionState, positive: boolean): boolean {
    const client = s.client.address;
    let member = false;
    for (let i = 0; i < subnets.length; i++) {
      const sn = subnets[i]!;
      // Tested and recorded whatever its family: an IPv4 subnet still bounds an IPv6 client's
      // scope (subnet.ts), and the decision cache recomputes scopes from what was recorded.
      const m = subnetMembership(client, sn.address, sn.prefix);
      const scope = membershipScope(m);
      narrowScope(s, scope);
      if (firstSlot >= 0) s.clientReads |= subnetReadBit(firstSlot + i);
      if (s.trace) {
        s.trace.step('scope', { input: `client subnet ${sn.text}`, clientInside: m >= 0, prefix: scope, scopeSoFar: s.scope });
      }
      if (m >= 0) {
        member = true;
        if (positive && sn.prefix > this.specificity) this.specificity = sn.prefix;
        if (!this.exhaustive) return true;
      }
    }
    return member;
  }
}

function canonicalQname(name: string): string {
  const lower = asciiLower(name);
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** Presentation of a condition for /explain and /status. */
export function describeCondition(c: Condition): unknown {
  switch (c.kind) {
    case 'always':
      return 'always';
    case 'location':
      return { clientLocation: c.patterns.map(formatQualifiers) };
    case 'subnet':
      return { clientSubnet: c.subnets.map((x) => x.text) };
    case 'qname':
      return { qname: c.names };
    case 'all':
      return { all: c.items.map(describeCondition) };
    case 'any':
      return { any: c.items.map(describeCondition) };
    case 'not':
      return { not: describeCondition(c.item) };
  }
}
