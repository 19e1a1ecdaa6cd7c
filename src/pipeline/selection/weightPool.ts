import type { LiveDc } from './stage.js';

/**
 * The endpoints a balance algorithm may choose from in one data center: weight 0 means "never
 * while a positive-weight endpoint is available", so zero-weight endpoints are dropped when at
 * least one live endpoint has a positive weight. When every live endpoint weighs 0 they are all
 * kept and the weighted algorithms treat them as equal ({@link effectiveWeight}). Weights are
 * those of the queried type only: a record's candidates hold only endpoints that can answer its
 * type (compileRecord.ts), so an AAAA query never weighs A endpoints.
 */
export function weightPool(dc: LiveDc): LiveDc {
  let zero = 0;
  for (let i = 0; i < dc.endpoints.length; i++) if (dc.endpoints[i]!.weight === 0) zero++;
  if (zero === 0 || zero === dc.endpoints.length) return dc;
  return { candidate: dc.candidate, endpoints: dc.endpoints.filter((e) => e.weight > 0) };
}

/** An endpoint's weight inside a pool whose weights sum to `total`: all-zero pools weigh 1 each. */
export function effectiveWeight(weight: number, total: number): number {
  return total === 0 ? 1 : weight;
}
