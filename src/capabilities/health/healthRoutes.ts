import type { AdminRoute, RouteSink } from '../../core/contracts/adminRoute.js';
import type { Engine } from '../../pipeline/engine.js';
import { canonicalIfIpText } from '../../core/net/ipAddress.js';
import { endpointSelectorSchema } from './endpointSelector.js';
import type { HealthMonitor } from './healthMonitor.js';
import type { OverrideRequest } from './overrides.js';

const OVERRIDES: readonly OverrideRequest[] = ['force-up', 'force-down', 'drain', 'none'];

/**
 * The health admin routes:
 * - `GET /health`: every check, endpoint, data center and service status, and the state file;
 * - `POST /health/override` (token): body `{"endpoint": "web/us-east/192.0.2.10", "override":
 *   "force-down" | "force-up" | "drain" | "none"}`; answers 200 with the snapshot generation the
 *   change is in (`generation()` right after the override was published: the next query sees
 *   it), 400 for a bad body, 404 for an unknown endpoint key.
 *   The key's address may be in any spelling (`web/us-east/2001:DB8::0001` names
 *   `web/us-east/2001:db8::1`); the response carries the canonical key.
 *   Many endpoints in one call: instead of `endpoint`, any of `dc`, `service`, `endpoints` (a glob
 *   over keys) and `cidr` (`endpointSelector.ts`); every matched endpoint changes in one published
 *   view (a drained data center leaves the answers at once); the answer lists the `matched` keys,
 *   404 when none matched.
 */
export function healthRoutes(monitor: HealthMonitor, generation: () => number): readonly AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/health',
      mutating: false,
      handle: async () => ({ status: 200, json: await monitor.reportInSlices() }),
    },
    {
      method: 'POST',
      path: '/health/override',
      mutating: true,
      handle({ body }) {
        const b = body as { endpoint?: unknown; override?: unknown } | undefined;
        if (typeof b === 'object' && b !== null && b.endpoint === undefined && OVERRIDES.includes(b.override as OverrideRequest)) {
          const { override, ...rest } = b as Record<string, unknown>;
          const parsed = endpointSelectorSchema.safeParse(rest);
          if (!parsed.success)
            return { status: 400, json: { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') } };
          const matched = monitor.setOverrides(parsed.data, override as OverrideRequest);
          if (matched.length === 0) return { status: 404, json: { error: 'no enabled endpoint matches', selector: parsed.data } };
          return { status: 200, json: { override, matched, generation: generation() } };
        }
        if (typeof b !== 'object' || b === null || typeof b.endpoint !== 'string' || !OVERRIDES.includes(b.override as OverrideRequest)) {
          return {
            status: 400,
            json: {
              error: `expected {"endpoint": "<service/dc/address>", "override": one of ${OVERRIDES.join(', ')}}, or dc, service, endpoints (a glob) or cidr instead of endpoint`,
            },
          };
        }
        const endpoint = canonicalEndpointKey(b.endpoint);
        try {
          monitor.setOverride(endpoint, b.override as OverrideRequest);
        } catch (e) {
          if (e instanceof RangeError) return { status: 404, json: { error: e.message } };
          throw e;
        }
        return { status: 200, json: { endpoint, override: b.override, generation: generation() } };
      },
    },
  ];
}

/** Adds {@link healthRoutes} to `admin`, with the generation of `engine`'s snapshot. */
export function registerHealthRoutes(admin: RouteSink, monitor: HealthMonitor, engine: Engine): void {
  for (const r of healthRoutes(monitor, () => engine.snapshot.generation)) admin.route(r);
}

/** `service/dc/address` with the address in its canonical spelling, as endpoint keys are built; other keys unchanged. */
export function canonicalEndpointKey(key: string): string {
  const slash = key.lastIndexOf('/');
  return `${key.slice(0, slash + 1)}${canonicalIfIpText(key.slice(slash + 1))}`;
}
