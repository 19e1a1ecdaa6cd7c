import { isIPv4 } from 'node:net';
import type { z } from 'zod';
import type { RedirectListenerConfig } from './listenerSchema.js';

/** What the redirect door reads of the whole configuration: its listener, the GSLB records, services and data centers. */
export interface RedirectDoorConfig {
  readonly listeners: { readonly redirect?: RedirectListenerConfig | undefined };
  readonly records: readonly { readonly name: string; readonly type: string; readonly service: string }[];
  readonly services: readonly {
    readonly name: string;
    readonly endpoints: readonly { readonly dc: string; readonly address?: string | undefined; readonly enabled: boolean }[];
  }[];
  readonly datacenters: readonly { readonly name: string }[];
}

/** The record types a redirect host's record may have: the decision is a data center, so an address record's. */
export const REDIRECT_RECORD_TYPES = ['A', 'AAAA'] as const;

/**
 * The cross-references of `listeners.redirect` (run at start-up, `check-config` and every reload,
 * so a reload that drops a record a host needs is refused rather than breaking the door):
 * - each host's `record` names a GSLB record of type A or AAAA;
 * - each key of `urls` is a data center;
 * - every data center such a record can answer with (an enabled endpoint of its service, of the
 *   record's address family) has a URL: otherwise a client sent there could not be redirected.
 * Each problem is an issue on `ctx` with its path from the configuration's root.
 */
export function checkRedirectReferences(config: RedirectDoorConfig, ctx: z.RefinementCtx): void {
  const cfg = config.listeners.redirect;
  if (!cfg) return;
  const dcs = new Set(config.datacenters.map((d) => d.name));
  cfg.hosts.forEach((h, i) => {
    const at = ['listeners', 'redirect', 'hosts', i];
    const records = config.records.filter((r) => r.name === h.record && (REDIRECT_RECORD_TYPES as readonly string[]).includes(r.type));
    if (records.length === 0) ctx.addIssue({ code: 'custom', path: [...at, 'record'], message: `no GSLB record of type A or AAAA is named "${h.record}"` });
    for (const dc of Object.keys(h.urls)) {
      if (!dcs.has(dc)) ctx.addIssue({ code: 'custom', path: [...at, 'urls', dc], message: `no data center "${dc}"` });
    }
    for (const r of records) {
      const service = config.services.find((s) => s.name === r.service);
      const answering = new Set(
        (service?.endpoints ?? []).filter((e) => e.enabled && e.address !== undefined && isIPv4(e.address) === (r.type === 'A')).map((e) => e.dc),
      );
      for (const dc of answering) {
        if (h.urls[dc] === undefined) {
          ctx.addIssue({ code: 'custom', path: [...at, 'urls'], message: `no URL for data center "${dc}", which record ${r.name} ${r.type} can answer with` });
        }
      }
    }
  });
}
