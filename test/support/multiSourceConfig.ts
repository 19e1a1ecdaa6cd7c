import { EXAMPLE_ZONE } from './exampleZone.js';

/**
 * Configuration text for multi-source tests: zone `example.test`, data centers `a`, `b`, `c`
 * (plus any in `extraDcs`), service `web` with one A endpoint per data center (192.0.2.1, .2,
 * .3), and one GSLB record `www.example.test` A with the given policy (YAML flow mapping).
 */
export function multiSourceConfig(
  policy: string,
  o: { failsafe?: string[]; metrics?: string; endpoints?: string; datacenters?: string; extraRecords?: string } = {},
): string {
  return `
${EXAMPLE_ZONE}
datacenters: ${o.datacenters ?? '[{ name: a, lat: 50, lon: 8 }, { name: b, lat: 40, lon: -74 }, { name: c, lat: 35, lon: 139 }]'}
services:
  - name: web
    endpoints: ${o.endpoints ?? '[{ dc: a, address: 192.0.2.1 }, { dc: b, address: 192.0.2.2 }, { dc: c, address: 192.0.2.3 }]'}
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: ${policy}
    failsafe: [${(o.failsafe ?? []).join(', ')}]
${o.extraRecords ?? ''}
${o.metrics ? `metrics: ${o.metrics}` : ''}
`;
}

/** The address each data center answers with in {@link multiSourceConfig}'s default endpoints. */
export const DC_ADDRESS = { a: '192.0.2.1', b: '192.0.2.2', c: '192.0.2.3' } as const;
