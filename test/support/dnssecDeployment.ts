import { WWW } from './fixtureDeployment.js';

/**
 * The signed deployment of the DNSSEC tests: the fixture deployment's location data and data
 * centers (test/support/fixtureDeployment.ts: `www.example.test A` answers 192.0.2.30 for
 * 10.20.30.0/24, 192.0.2.20 for 10.20.99.0/24, 192.0.2.10 for 10.99.0.0/24), and two zones:
 *
 * - `example.test`: `www` (GSLB, ECS-dependent), `alias` CNAME → `www`, `*.wild` A 192.0.2.77,
 *   `sub.deep` A (so `deep` is an empty non-terminal), `big` with 25 A records (fits 512 octets
 *   unsigned, not signed), `tochain` CNAME → `www.ed.test` (a chain into the other zone);
 * - `ed.test`: `www` A 192.0.2.99, `x` CNAME → `www.example.test` (a chain into the first zone).
 *
 * Each zone's keys are given as base names relative to the configuration file.
 */
export interface SignedDeploymentOptions {
  readonly exampleKeys: readonly string[];
  readonly edKeys: readonly string[];
  /** Lines of the `dnssec.signatures` mapping, e.g. `{ validity: 7200, jitter: 0, refresh: 1800 }`. */
  readonly signatures?: string;
  /** Extra listener lines (YAML under `listeners:`), e.g. a compact or powerdns socket. */
  readonly listeners?: string;
  /** The DNS listener list; default one on 127.0.0.1, port 0. */
  readonly dns?: string;
  /** TTL (s) of example.test's DNSKEY RRset; default the engine's (3600). */
  readonly dnskeyTtl?: number;
}

/** Number of A records at `big.example.test`. */
export const BIG_COUNT = 25;

/** The configuration text of the signed deployment. */
export function signedDeploymentConfig(o: SignedDeploymentOptions): string {
  const big = Array.from({ length: BIG_COUNT }, (_, i) => `      - { name: big, type: A, data: 198.51.100.${i + 1} }`).join('\n');
  return `listeners:
  dns: ${o.dns ?? '[{ address: 127.0.0.1, port: 0 }]'}
  admin: { address: 127.0.0.1, port: 0 }
${o.listeners ?? ''}dns: { udpPayloadSize: 1232 }
logging: { level: info }
geo:
  sources:
    - { format: mmdb, path: loc4.mmdb }
    - { format: mmdb, path: loc6.mmdb }
zones:
  - name: example.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: alias, type: CNAME, data: www.example.test }
      - { name: tochain, type: CNAME, data: www.ed.test }
      - { name: "*.wild", type: A, data: 192.0.2.77 }
      - { name: sub.deep, type: A, data: 192.0.2.60 }
${big}
  - name: ed.test
    ttl: 300
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, minimum: 60 }
    ns: [ns1.example.test]
    records:
      - { name: www, type: A, data: 192.0.2.99 }
      - { name: x, type: CNAME, data: www.example.test }
datacenters:
  - { name: eu, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: ap, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: eu, address: ${WWW.eu} }
      - { dc: us, address: ${WWW.us} }
      - { dc: ap, address: ${WWW.ap} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 1, balanceAlgorithm: round-robin, default: [us] }
    failsafe: [${WWW.us}]
dnssec:
  zones:
    - { zone: example.test, keys: [${o.exampleKeys.join(', ')}]${o.dnskeyTtl === undefined ? '' : `, dnskeyTtl: ${o.dnskeyTtl}`} }
    - { zone: ed.test, keys: [${o.edKeys.join(', ')}] }
${o.signatures ? `  signatures: ${o.signatures}\n` : ''}`;
}
