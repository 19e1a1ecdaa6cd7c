import { buildMmdb, ipLocationRecord } from './mmdbWriter.js';

/**
 * A small deployment for end-to-end tests that start in well under a second: one zone, three data
 * centers, a static-proximity record, and location files generated at start (no GeoLite data).
 *
 * Location map (issue 6's scope cases): 10.0.0.0/8 → NL, 10.20.0.0/16 → US, 10.20.30.0/24 → JP,
 * 2001:db8::/32 → NL, everything else unknown. `www.example.test A` answers by proximity:
 *
 * | client (ECS)        | DC            | answer       | scope |
 * |---------------------|---------------|--------------|-------|
 * | 10.20.30.0/24       | ap (JP)       | 192.0.2.30   | 24    |
 * | 10.20.99.0/24       | us (US)       | 192.0.2.20   | 18    |
 * | 10.20.0.0/16        | us (US)       | 192.0.2.20   | 20    |
 * | 10.99.0.0/24        | eu (NL)       | 192.0.2.10   | 10    |
 * | 11.0.0.0/24         | us (default)  | 192.0.2.20   | 8     |
 * | 2001:db8::/48       | eu (NL)       | 192.0.2.10   | 32    |
 * | ::ffff:10.20.30.0/120 | ap (JP)     | 192.0.2.30   | 120 (96 + 24, family 2) |
 *
 * Other names: `ns1` A, `v6` AAAA, `alias` CNAME → www, `many` 40 A records (over 512 bytes
 * without EDNS: TC), `sub.deep` A (so `deep` is an empty non-terminal).
 */

/** Answers of `www.example.test A` per data center. */
export const WWW = { eu: '192.0.2.10', us: '192.0.2.20', ap: '192.0.2.30' } as const;

/** Number of A records at `many.example.test`. */
export const MANY_COUNT = 40;

/** The location files the fixture configuration refers to, by file name. */
export function fixtureLocationFiles(): Record<string, Buffer> {
  const nl = ipLocationRecord('NL', 'Noord-Holland', 'Amsterdam', 52.37, 4.89);
  const us = ipLocationRecord('US', 'Virginia', 'Ashburn', 39.04, -77.49);
  const jp = ipLocationRecord('JP', 'Tokyo', 'Tokyo', 35.69, 139.69);
  return {
    'loc4.mmdb': buildMmdb(4, [
      { cidr: '10.0.0.0/8', record: nl },
      { cidr: '10.20.0.0/16', record: us },
      { cidr: '10.20.30.0/24', record: jp },
    ]),
    'loc6.mmdb': buildMmdb(6, [{ cidr: '2001:db8::/32', record: nl }]),
  };
}

/** Options for {@link fixtureConfig}. */
export interface FixtureConfigOptions {
  /** Admin listener: a token (≥ 16 characters), `null` for an admin API without token, `false` for none. Default: a token. */
  readonly adminToken?: string | null | false;
  /** The address eu answers for www (reload tests change it). */
  readonly euAddress?: string;
  /** Extra YAML for the `dns:` behaviour section, e.g. `tcpIdleTimeoutMs: 1000`. */
  readonly dnsBehaviour?: string;
}

/** The admin token {@link fixtureConfig} configures by default. */
export const FIXTURE_TOKEN = 'e2e-token-0123456789abcdef';

/**
 * The fixture configuration: DNS on 127.0.0.1 and ::1, admin on 127.0.0.1, all on port 0 (the
 * engine picks free ports and logs them; `startEngine` reads them).
 */
export function fixtureConfig(options: FixtureConfigOptions = {}): string {
  const token = options.adminToken === undefined ? FIXTURE_TOKEN : options.adminToken;
  const admin =
    token === false ? '' : token === null ? '  admin: { address: 127.0.0.1, port: 0 }\n' : `  admin: { address: 127.0.0.1, port: 0, token: "${token}" }\n`;
  const many = Array.from({ length: MANY_COUNT }, (_, i) => `      - { name: many, type: A, data: 198.51.100.${i + 1} }`).join('\n');
  return `listeners:
  dns:
    - { address: 127.0.0.1, port: 0 }
    - { address: "::1", port: 0 }
${admin}dns: { ${options.dnsBehaviour ?? 'udpPayloadSize: 1232'} }
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
      - { name: v6, type: AAAA, data: "2001:db8::10" }
      - { name: alias, type: CNAME, data: www.example.test }
      - { name: sub.deep, type: A, data: 192.0.2.60 }
${many}
datacenters:
  - { name: eu, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: ap, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: eu, address: ${options.euAddress ?? WWW.eu} }
      - { dc: us, address: ${WWW.us} }
      - { dc: ap, address: ${WWW.ap} }
records:
  - name: www.example.test
    type: A
    ttl: 30
    service: web
    policy: { type: static-proximity, pickDcCount: 1, balanceAlgorithm: round-robin, default: [us] }
    failsafe: [${WWW.us}]
`;
}
