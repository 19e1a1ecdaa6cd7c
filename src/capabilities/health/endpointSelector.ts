import picomatch from 'picomatch';
import { z } from 'zod';
import { parseCidr, parseIp, sameAddress, maskAddress, type IpPrefix } from '../../core/net/ipAddress.js';
import type { PlannedEndpoint } from './healthPlan.js';

/**
 * Which endpoints one override request names, by any of: a data center (`dc`: every endpoint
 * there, whatever the service), a service, a glob over endpoint keys (`endpoints`:
 * `service/dc/address`, `*` never crosses a `/`, so `web/us-east/*` is every `web` endpoint of
 * `us-east`; picomatch syntax), a CIDR over endpoint addresses (`cidr`: `192.0.2.0/24`; endpoints
 * named by a target, not an address, never match). Every criterion given must match; at least one
 * is required, so an empty request never drains everything.
 */
export const endpointSelectorSchema = z
  .strictObject({
    dc: z.string().min(1).optional(),
    service: z.string().min(1).optional(),
    endpoints: z.string().min(1).optional(),
    cidr: z
      .string()
      .refine((t) => tryCidr(t) !== undefined, { message: 'not an address/length (e.g. 192.0.2.0/24 or 2001:db8::/32)' })
      .optional(),
  })
  .refine((s) => s.dc !== undefined || s.service !== undefined || s.endpoints !== undefined || s.cidr !== undefined, {
    message: 'name at least one of dc, service, endpoints (a glob over service/dc/address), cidr',
  });

/** A validated selector (see {@link endpointSelectorSchema}). */
export type EndpointSelector = z.output<typeof endpointSelectorSchema>;

/** True when `e` matches every criterion of `s`. */
export function matchesEndpoint(s: EndpointSelector, e: PlannedEndpoint): boolean {
  if (s.dc !== undefined && e.dc !== s.dc) return false;
  if (s.service !== undefined && e.service !== s.service) return false;
  if (s.endpoints !== undefined && !globMatcher(s.endpoints)(e.key)) return false;
  if (s.cidr !== undefined) {
    const range = tryCidr(s.cidr)!;
    const address = tryIp(e.key.slice(e.key.lastIndexOf('/') + 1));
    if (!address || !sameAddress(maskAddress(address, range.prefix), range.address)) return false;
  }
  return true;
}

/** Compiled globs, by pattern (a drain compiles its pattern once for every endpoint). */
const globs = new Map<string, (key: string) => boolean>();

function globMatcher(pattern: string): (key: string) => boolean {
  let m = globs.get(pattern);
  if (!m) {
    m = picomatch(pattern, { dot: true });
    if (globs.size > 256) globs.clear();
    globs.set(pattern, m);
  }
  return m;
}

function tryCidr(text: string): IpPrefix | undefined {
  try {
    return parseCidr(text);
  } catch {
    return undefined;
  }
}

function tryIp(text: string): ReturnType<typeof parseIp> | undefined {
  try {
    return parseIp(text);
  } catch {
    return undefined;
  }
}
