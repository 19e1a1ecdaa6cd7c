/**
 * A configuration with many GSLB records, for the reload tests and benchmarks: one zone
 * `big.test`, three data centers, `services` services (3 endpoints each, one per DC) and `records`
 * static-proximity A records `r<i>.big.test` spread over them (about 190 bytes of YAML per record;
 * 20,000 records are about 4 MB). No location data: pass `geo` text to add a `geo:` section.
 * `ttl` is the records' TTL, so two texts that differ in it differ in every record.
 */
export function largeConfig(options: {
  readonly records: number;
  readonly services?: number;
  readonly ttl?: number;
  readonly head?: string;
  readonly geo?: string;
}): string {
  const services = options.services ?? 200;
  const ttl = options.ttl ?? 30;
  const out: string[] = [options.head ?? '', options.geo ?? ''];
  out.push(
    'zones:\n  - name: big.test\n    ttl: 300\n    soa: { mname: ns1.big.test, rname: hostmaster.big.test, serial: 1 }\n    ns: [ns1.big.test]\n    records:\n      - { name: ns1, type: A, data: 192.0.2.53 }\n',
    'datacenters:\n  - { name: us-east, location: North America.US, lat: 39.0, lon: -77.5 }\n  - { name: eu-west, location: Europe.NL, lat: 52.4, lon: 4.9 }\n  - { name: ap-northeast, location: Asia.JP, lat: 35.7, lon: 139.7 }\n',
    'services:\n',
  );
  for (let i = 0; i < services; i++) {
    const net = `10.${(i >> 8) & 255}.${i & 255}`;
    out.push(
      `  - name: svc${i}\n    endpoints:\n      - { dc: us-east, address: ${net}.1 }\n      - { dc: eu-west, address: ${net}.2 }\n      - { dc: ap-northeast, address: ${net}.3 }\n`,
    );
  }
  out.push('records:\n');
  for (let i = 0; i < options.records; i++) {
    out.push(
      `  - name: r${i}.big.test\n    type: A\n    ttl: ${ttl}\n    service: svc${i % services}\n    policy: { type: static-proximity, pickDcCount: 1, balanceAlgorithm: round-robin, default: [us-east] }\n    failsafe: [192.0.2.10]\n`,
    );
  }
  return out.join('');
}
