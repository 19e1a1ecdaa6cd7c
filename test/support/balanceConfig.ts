import { EXAMPLE_ZONE } from './exampleZone.js';

/**
 * Configuration text for balance-algorithm tests: one data center `a` (lat 50, lon 8) whose
 * service `web` has the given endpoints, and `www.example.test` A (and AAAA) selecting by host
 * cpu with the given balanceAlgorithm (an AAAA record too when an endpoint has a quoted IPv6
 * address); every query therefore lands in `a` unless more data centers are given.
 */
export function balanceConfig(algorithm: string, endpoints: string, o: { datacenters?: string; pickDcCount?: number } = {}): string {
  const policy = `{ type: multi-source, source: host, metric: cpu, criterion: lowest, pickDcCount: ${o.pickDcCount ?? 1}, balanceAlgorithm: ${algorithm} }`;
  return `
${EXAMPLE_ZONE}
datacenters: ${o.datacenters ?? '[{ name: a, lat: 50, lon: 8 }]'}
services:
  - name: web
    endpoints:
${endpoints
  .trim()
  .split('\n')
  .map((l) => `      - ${l.trim()}`)
  .join('\n')}
records:
  - { name: www.example.test, type: A, service: web, policy: ${policy} }
${endpoints.includes('"') ? `  - { name: www.example.test, type: AAAA, service: web, policy: ${policy} }` : ''}
`;
}

/** Counts how often each answer appears over `n` queries. */
export function tally(n: number, query: (i: number) => string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i++) for (const a of query(i)) counts.set(a, (counts.get(a) ?? 0) + 1);
  return counts;
}
