import type { z } from 'zod';
import type { MonitorBase } from './checks/checkKind.js';
import { CHECK_KINDS, findKind, type CheckKindList } from './checks/registry.js';
import type { HealthConfigInput, HealthEndpointInput } from './healthConfig.js';

/**
 * Checks the references of the health configuration (src/capabilities/health/README.md): monitor names are
 * unique and exist where used, every monitored target has an address and a port, timeouts fit
 * in intervals, tiers name data centers and endpoints of the record's service at most once,
 * `failsafe` all-down needs a fail-safe list, `localFirst` needs the engine's `site`, and `site`
 * is a data center's site. Every issue carries the path of the offending field. Whether a monitor
 * needs a port comes from its kind in `kinds` (a kind without a default port).
 */
export function healthReferencesOf(kinds: CheckKindList): (cfg: HealthConfigInput, ctx: z.RefinementCtx) => void {
  return (cfg, ctx) => checkReferences(cfg, ctx, kinds);
}

/** {@link healthReferencesOf} the engine's check kinds. */
export const checkHealthReferences = healthReferencesOf(CHECK_KINDS);

function checkReferences(cfg: HealthConfigInput, ctx: z.RefinementCtx, kinds: CheckKindList): void {
  const issue = (path: (string | number)[], message: string): void => {
    ctx.addIssue({ code: 'custom', path, message });
  };

  const monitors = new Map<string, MonitorBase>();
  cfg.health.monitors.forEach((m, i) => {
    if (monitors.has(m.name)) issue(['health', 'monitors', i, 'name'], `monitor "${m.name}" is defined twice`);
    monitors.set(m.name, m);
    if (m.timeoutMs > m.intervalMs) issue(['health', 'monitors', i, 'timeoutMs'], `timeoutMs (${m.timeoutMs}) is longer than intervalMs (${m.intervalMs})`);
  });

  const useMonitor = (name: string, port: number | undefined, path: (string | number)[]): void => {
    const m = monitors.get(name);
    if (!m) return issue(path, `unknown monitor "${name}"`);
    // A kind without a default port (tcp) needs one from the monitor or the check target.
    const kind = findKind(m.type, kinds);
    if (kind && kind.defaultPort === undefined && m.port === undefined && port === undefined) {
      issue(path, `monitor "${name}" (${m.type}) needs a port: set it on the monitor or in the check target`);
    }
  };

  cfg.services.forEach((svc, si) =>
    svc.endpoints.forEach((ep, ei) => {
      const path = ['services', si, 'endpoints', ei];
      ep.monitors.forEach((name, mi) => useMonitor(name, ep.check?.port, [...path, 'monitors', mi]));
      if (ep.monitors.length > 0 && ep.address === undefined && ep.check?.address === undefined) {
        issue([...path, 'check', 'address'], 'an endpoint with a target needs "check.address" to be monitored (monitors resolve no names)');
      }
    }),
  );

  const sites = new Set<string>();
  cfg.datacenters.forEach((dc, di) => {
    sites.add(dc.site ?? dc.name);
    for (const group of ['wan', 'lan'] as const) {
      dc.checkPoints?.[group].forEach((cp, ci) => useMonitor(cp.monitor, cp.port, ['datacenters', di, 'checkPoints', group, ci, 'monitor']));
    }
  });
  if (cfg.site !== undefined && !sites.has(cfg.site)) issue(['site'], `no data center is at site "${cfg.site}"`);

  const dcNames = new Set(cfg.datacenters.map((d) => d.name));
  const services = new Map(cfg.services.map((s) => [s.name, s]));
  cfg.records.forEach((rec, ri) => {
    const path = ['records', ri, 'health'];
    const h = rec.health;
    if (h.allDown === 'failsafe' && rec.failsafe.length === 0) issue([...path, 'allDown'], '"failsafe" needs a non-empty fail-safe list (records[].failsafe)');
    if (h.localFirst && cfg.site === undefined) issue([...path, 'localFirst'], 'local-first needs the engine\'s "site" (top-level key)');
    const svc = services.get(rec.service);
    const seenDcs = new Set<string>();
    const seenEndpoints = new Set<string>();
    const dcsOfSeenEndpoints = new Set<string>();
    h.tiers.forEach((tier, ti) => {
      tier.dcs.forEach((dc, di) => {
        if (!dcNames.has(dc)) issue([...path, 'tiers', ti, 'dcs', di], `unknown data center "${dc}"`);
        else if (seenDcs.has(dc) || dcsOfSeenEndpoints.has(dc)) issue([...path, 'tiers', ti, 'dcs', di], `data center "${dc}" is in more than one tier`);
        seenDcs.add(dc);
      });
      tier.endpoints.forEach((text, ei) => {
        const matches = svc?.endpoints.filter((e) => endpointLabel(e) === text) ?? [];
        if (svc && matches.length === 0) issue([...path, 'tiers', ti, 'endpoints', ei], `service "${svc.name}" has no endpoint "${text}"`);
        if (seenEndpoints.has(text) || matches.some((m) => seenDcs.has(m.dc)))
          issue([...path, 'tiers', ti, 'endpoints', ei], `endpoint "${text}" is in more than one tier`);
        for (const m of matches) dcsOfSeenEndpoints.add(m.dc);
        seenEndpoints.add(text);
      });
    });
  });
}

/** How a tier names an endpoint: its address, or its target (with `:port` when it has one). */
export function endpointLabel(e: Pick<HealthEndpointInput, 'address' | 'target' | 'port'>): string {
  return e.address ?? `${e.target}${e.port !== undefined ? `:${e.port}` : ''}`;
}
