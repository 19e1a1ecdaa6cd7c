/**
 * What one probe train measured (docs/PRODUCT.md §5 client metrics): from the round-trip times of
 * the packets that were answered, in sending order, the minimum, the median and the interarrival
 * jitter of RFC 3550 §6.4.1 (J += (|D| − J) / 16, D the change of transit time between two
 * consecutive answered packets; here the change of RTT, as both ends are the agent).
 */
export interface TrainStats {
  readonly rttMinMs: number;
  readonly rttMedianMs: number;
  readonly jitterMs: number;
}

/** Statistics of the answered packets' RTTs (ms, sending order); undefined when none was answered. */
export function trainStats(rtts: readonly number[]): TrainStats | undefined {
  if (rtts.length === 0) return undefined;
  const sorted = [...rtts].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  let jitter = 0;
  for (let i = 1; i < rtts.length; i++) jitter += (Math.abs(rtts[i]! - rtts[i - 1]!) - jitter) / 16;
  return { rttMinMs: round(sorted[0]!), rttMedianMs: round(median), jitterMs: round(jitter) };
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
