import { maskWord, type IpAddress } from '../net/ipAddress.js';

/**
 * Read-only view of live metrics (host, service and client sources, docs/PRODUCT.md §3) with explicit
 * staleness. The metric store (`src/capabilities/steering/`) implements it; until metrics are configured the
 * engine uses {@link emptyMetricView}, which holds nothing.
 *
 * Subjects: host metrics are kept per data center under the subject `''`, service metrics per
 * (service name, data center) under the subject = service name, client metrics per (client
 * network, data center) under the subject = the network's key ({@link clientNetworkKey}, a
 * number for IPv4 and for IPv6 networks of at most 52 bits). Metric ids are positions in
 * `src/capabilities/steering/catalog.ts`.
 */

/** Where a metric comes from: the DC platform, a service in a DC, or the path to a client network. */
export type MetricSource = 'host' | 'service' | 'client';

/** One stored sample; never changed once written (a new sample replaces it). */
export interface MetricSample {
  readonly value: number;
  /** When the engine received it, ms since the Unix epoch. */
  readonly atMs: number;
  /** Who reported it: an agent's name; absent for a push with the admin token or a monitor verdict. */
  readonly origin?: string;
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
  /** The agent whose report the pushed sample came from (absent: pushed with the admin token, or unknown). */
  readonly reportedBy?: string;
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
  /** Lengths that define a client network (docs/PRODUCT.md §3 default /24 and /48). */
  readonly clientNetworkPrefix: ClientNetworkPrefix;
}

/** The default client network lengths: /24 for IPv4, /48 for IPv6 (docs/PRODUCT.md §3). */
export const DEFAULT_CLIENT_NETWORK_PREFIX: ClientNetworkPrefix = { ipv4: 24, ipv6: 48 };

/** Longest IPv6 client network whose number is an exact double: 52 bits, so `-1 - n` stays exact. */
const NUMERIC_IPV6_BITS = 52;

/**
 * The subject under which client metrics are kept for the client network of `address` (IPv4-mapped
 * IPv6 addresses are IPv4: `IpAddress` folds them). Built on every client-metric query, so numbers
 * wherever they are exact, no string:
 * - IPv4: the network number, `w0 >>> (32 − length)` (0 … 2³² − 1);
 * - IPv6 networks of at most 52 bits (the default /48): `−1 − n`, `n` the network number (the top
 *   `length` bits), so IPv6 keys are negative and never meet IPv4 ones;
 * - longer IPv6 networks (/53 … /128): the string `6/w0/w1/w2/w3` of the masked words.
 */
export function clientNetworkKey(address: IpAddress, prefix: ClientNetworkPrefix): number | string {
  if (address.family === 4) return prefix.ipv4 === 0 ? 0 : address.w0 >>> (32 - prefix.ipv4);
  const bits = prefix.ipv6;
  if (bits <= 32) return -1 - (address.w0 >>> (32 - bits));
  if (bits <= NUMERIC_IPV6_BITS) return -1 - (address.w0 * 2 ** (bits - 32) + (address.w1 >>> (64 - bits)));
  const w = (word: number, offset: number): number => (word & maskWord(bits - offset)) >>> 0;
  return `6/${w(address.w0, 0)}/${w(address.w1, 32)}/${w(address.w2, 64)}/${w(address.w3, 96)}`;
}

/** A view with no metrics at all. */
export const emptyMetricView: MetricView = {
  read: () => NaN,
  describe: () => ({ state: 'missing' }),
  clientNetworkPrefix: DEFAULT_CLIENT_NETWORK_PREFIX,
};
