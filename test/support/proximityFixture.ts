/**
 * The network-proximity deployment of the end-to-end tests (docs/PRODUCT.md §5, seed 000): proximity
 * zones 0 (U.S.) → 0.1 (East Coast), 0.2 (West Coast) and 1 (Europe), a data center in each leaf,
 * an agent credential per leaf zone, one `network-proximity` record `www.work.test`.
 */

/** The admin token of the engines. */
export const ADMIN_TOKEN = 'admin-token-0123456789';
/** Each leaf zone's agent token. */
export const ZONE_TOKENS = { '0.1': 'zone-0-1-token-0123456789', '0.2': 'zone-0-2-token-0123456789', '1': 'zone-1-token-0123456789' } as const;
/** A leaf proximity zone with an agent. */
export type LeafZone = keyof typeof ZONE_TOKENS;
/** The leaf zones, in order. */
export const LEAF_ZONES = Object.keys(ZONE_TOKENS) as LeafZone[];
/** The address each data center answers. */
export const DC_ADDRESS = { east: '192.0.2.1', west: '192.0.2.2', eu: '192.0.2.3' } as const;

export interface ProximityConfigOptions {
  /** YAML sections between the listeners and `agents` (logging, store). */
  readonly sections: string;
  readonly pdb?: 'enabled' | 'disabled';
  /** Text appended inside each data center's endpoint entry (monitors). */
  readonly endpointExtra?: Partial<Record<keyof typeof DC_ADDRESS, string>>;
  /** YAML sections after the records (health). */
  readonly tail?: string;
}

/** The engine configuration: a DNS and an admin listener on loopback (port 0), then the deployment. */
export function proximityConfig(o: ProximityConfigOptions): string {
  const ep = (dc: keyof typeof DC_ADDRESS): string => `      - { dc: ${dc}, address: ${DC_ADDRESS[dc]}${o.endpointExtra?.[dc] ?? ''} }`;
  return `
listeners:
  dns: [{ address: 127.0.0.1, port: 0 }]
  admin: { address: 127.0.0.1, port: 0, token: ${ADMIN_TOKEN} }
${o.sections}
agents:
  credentials:
${LEAF_ZONES.map((z) => `    - { name: zone-${z.replace('.', '-')}, zone: "${z}", token: ${ZONE_TOKENS[z]} }`).join('\n')}
  probes: { refreshSeconds: 1 }
networkProximity:
${o.pdb ? `  pdb: ${o.pdb}\n` : ''}  zones:
    - { id: "0", name: U.S. }
    - { id: "0.1", name: East Coast }
    - { id: "0.2", name: West Coast }
    - { id: "1", name: Europe }
  defaultOrder: ["1"]
  indexTtlSeconds: 1
  samples: 1
  toleranceMs: 5
zones:
  - name: work.test
    soa: { mname: ns1.work.test, rname: hostmaster.work.test }
    ns: [ns1.work.test]
datacenters:
  - { name: east, proximityZone: "0.1" }
  - { name: west, proximityZone: "0.2" }
  - { name: eu, proximityZone: "1" }
services:
  - name: web
    endpoints:
${ep('east')}
${ep('west')}
${ep('eu')}
records:
  - { name: www.work.test, type: A, ttl: 5, service: web, policy: { type: network-proximity } }
${o.tail ?? ''}
`;
}
