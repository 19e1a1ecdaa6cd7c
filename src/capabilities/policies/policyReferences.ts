import type { z } from 'zod';
import { subnetsOverlap } from '../../core/net/subnet.js';
import type { ActionConfig, ConditionConfig, PolicyBindingConfig, PoliciesRecordConfig, SubnetOverlap } from './policySchema.js';
import type { DcListConfig } from '../../pipeline/selection/ranking.js';
import type { SubnetConfig } from '../../core/net/subnet.js';
import { isStaticPolicy } from './policySchema.js';
import type { DataCenterConfig } from '../../pipeline/config/topologySchema.js';

interface PolicyReferenced {
  datacenters: readonly DataCenterConfig[];
  records: readonly PoliciesRecordConfig[];
  policies?: PolicyBindingConfig | undefined;
  actions: readonly ActionConfig[];
}

type Path = (string | number)[];

/** One rule of a binding as the overlap check sees it. */
interface RuleView {
  readonly label: string;
  readonly when: ConditionConfig | undefined;
}

/**
 * Checks DNS policies, actions and static rules against the rest of the configuration: action
 * and policy names are unique and referenced actions exist; data centers in views and static
 * rules exist and appear once per list; DNS policies are not bound to `static` records; rules
 * after an unconditional rule are reachable; and when client subnets of two rules of one binding
 * overlap, the binding states `subnetOverlap`, so which rule wins is never an accident of order.
 */
export function checkPolicyReferences(cfg: PolicyReferenced, ctx: z.RefinementCtx): void {
  const issue = (path: Path, message: string): void => {
    ctx.addIssue({ code: 'custom', path, message });
  };
  const dcNames = new Set(cfg.datacenters.map((d) => d.name));
  const checkDcList = (list: DcListConfig, path: Path): void => {
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      const names = Array.isArray(entry) ? entry : [entry];
      names.forEach((dc, j) => {
        const at = Array.isArray(entry) ? [...path, i, j] : [...path, i];
        if (!dcNames.has(dc)) issue(at, `unknown data center "${dc}"`);
        else if (seen.has(dc)) issue(at, `data center "${dc}" is listed twice`);
        seen.add(dc);
      });
    });
  };

  const actionNames = new Set<string>();
  cfg.actions.forEach((a, i) => {
    if (actionNames.has(a.name)) issue(['actions', i, 'name'], `action "${a.name}" is defined twice`);
    actionNames.add(a.name);
    if (a.type === 'view') checkDcList(a.dcs, ['actions', i, 'dcs']);
  });

  const checkBinding = (b: PolicyBindingConfig, path: Path): void => {
    const names = new Set<string>();
    b.rules.forEach((r, i) => {
      if (names.has(r.name)) issue([...path, 'rules', i, 'name'], `policy "${r.name}" is defined twice in this binding`);
      names.add(r.name);
      if (!actionNames.has(r.action)) issue([...path, 'rules', i, 'action'], `unknown action "${r.action}"`);
    });
    checkRuleOrder(
      b.rules.map((r) => ({ label: `"${r.name}"`, when: r.when })),
      b.subnetOverlap,
      path,
      issue,
    );
  };

  if (cfg.policies) checkBinding(cfg.policies, ['policies']);
  cfg.records.forEach((rec, i) => {
    const p = rec.policy;
    if (isStaticPolicy(p)) {
      if (rec.policies) {
        issue(['records', i, 'policies'], 'DNS policies do not apply to a static record; put the condition into its rules');
      }
      p.rules.forEach((r, j) => checkDcList(r.dcs, ['records', i, 'policy', 'rules', j, 'dcs']));
      checkRuleOrder(
        p.rules.map((r, j) => ({ label: `rules[${j}]`, when: r.when })),
        p.subnetOverlap,
        ['records', i, 'policy'],
        issue,
      );
    } else if (rec.policies) {
      checkBinding(rec.policies, ['records', i, 'policies']);
    }
  });
}

/**
 * Rules after an unconditional one can never win under `first`; overlapping subnets of two rules
 * need an explicit `subnetOverlap`.
 */
function checkRuleOrder(rules: readonly RuleView[], overlap: SubnetOverlap | undefined, path: Path, issue: (path: Path, message: string) => void): void {
  if ((overlap ?? 'first') === 'first') {
    const always = rules.findIndex((r) => r.when === undefined);
    if (always >= 0 && always < rules.length - 1) {
      issue([...path, 'rules', always + 1], `unreachable: rule ${rules[always]!.label} has no condition, so the rules after it never apply`);
    }
  }
  if (overlap !== undefined) return;
  const subnets = rules.map((r) => (r.when ? subnetsOf(r.when) : []));
  for (let a = 0; a < rules.length; a++) {
    for (let b = a + 1; b < rules.length; b++) {
      for (const x of subnets[a]!) {
        const y = subnets[b]!.find((s) => subnetsOverlap(x.address, x.prefix, s.address, s.prefix));
        if (y) {
          issue(
            [...path, 'subnetOverlap'],
            `is required: rule ${rules[a]!.label} (${x.text}) and rule ${rules[b]!.label} (${y.text}) overlap; say "first" (order decides) or "most-specific" (the longest matching subnet decides)`,
          );
          return;
        }
      }
    }
  }
}

/** Every client subnet a condition mentions, at any depth. */
function subnetsOf(c: ConditionConfig): SubnetConfig[] {
  const out: SubnetConfig[] = [...(c.clientSubnet ?? [])];
  for (const sub of [...(c.all ?? []), ...(c.any ?? []), ...(c.not ? [c.not] : [])]) out.push(...subnetsOf(sub));
  return out;
}
