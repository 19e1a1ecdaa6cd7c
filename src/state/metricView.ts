import { maskWord, type IpAddress } from '../geo/ipAddress.js';

/**
 * Read-only view of live metrics (host, service and client sources, SPEC §3) with explicit
 * staleness. The metric store (`src/metrics/`) implements it; until metrics are configured the
 * engine uses {@link emptyMetricView}, which holds nothing.
 *
 * Subjects: host metrics are kept per data center under the subject `''`, service metrics per
 * (service name, data center) under the subject = service name, client metrics per (client
 * network, data center) under the subject = the network's key ({@link clientNetworkKey}, a
 * number for IPv4). Metric ids are positions in `src/metrics/catalog.ts`.
 */

/** Where a metric comes from: the DC platform, a service in a DC, or the path to a client network. */
export type MetricSource = 'host' | 'service' | 'client';

/** One stored sample; never changed once written (a new sample replaces it). */
export interface MetricSample {
  readonly value: number;
  /** When the engine received it, ms since the Unix epoch. */
  readonly atMs: number;
}

/** What /explain shows of one metric of one data center. */
export interface MetricReading {
  /** The value the decision used; absent when unknown. */
  readonly value?: number;
  /** Age of the pushed sample in ms; absent when none was ever received. */
  readonly ageMs?: number;
  readonly state: 'fresh' | 'stale' | 'missing';
  /** For `status` only: what the health monitors say (absent when no monitor reports). */
  readonly monitor?: 'up' | 'down';
}

/** Client networks: client addresses masked to these lengths (bits) key client metrics and tie-breaks. */
export interface ClientNetworkPrefix {
  readonly ipv4: number;
  readonly ipv6: number;
}

export interface MetricView {
  /**
   * The value of a metric of one data center as the decision uses it, or NaN when it is unknown
   * (never received, or older than the source's staleness limit). `status` is 1 (up) or 0 (down)
   * after the agreement rule: pushed status and monitor status must both say up when both report.
   * Never allocates: this is the query path.
   */
  read(source: MetricSource, subject: string | number, dc: string, metric: number, nowMs: number): number;
  /** The same metric described for /explain (value, age, freshness, monitor opinion). */
  describe(source: MetricSource, subject: string | number, dc: string, metric: number, nowMs: number): MetricReading;
  /** Lengths that define a client network (SPEC §3 default /24 and /48). */
  readonly clientNetworkPrefix: ClientNetworkPrefix;
}

/** The default client network lengths: /24 for IPv4, /48 for IPv6 (SPEC §3). */
export const DEFAULT_CLIENT_NETWORK_PREFIX: ClientNetworkPrefix = { ipv4: 24, ipv6: 48 };

/**
 * The subject under which client metrics are kept for the client network of `address`: for
 * IPv4 the network number (the address shifted right by 32 − length bits: a small integer), for
 * IPv6 a string of the masked words.
 */
export function clientNetworkKey(address: IpAddress, prefix: ClientNetworkPrefix): number | string {
  if (address.family === 4) return prefix.ipv4 === 0 ? 0 : address.w0 >>> (32 - prefix.ipv4);
  const bits = prefix.ipv6;
  const w = (word: number, offset: number): number => (word & maskWord(bits - offset)) >>> 0;
  return `6/${w(address.w0, 0)}/${w(address.w1, 32)}/${w(address.w2, 64)}/${w(address.w3, 96)}`;
}

/** A view with no metrics at all. */
export const emptyMetricView: MetricView = {
  read: () => NaN,
  describe: () => ({ state: 'missing' }),
  clientNetworkPrefix: DEFAULT_CLIENT_NETWORK_PREFIX,
};
