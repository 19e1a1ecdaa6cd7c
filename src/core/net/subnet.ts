import type { IpAddress } from './ipAddress.js';
import { outsideIpv4MappedScope } from './ipv4InIpv6.js';

/** A client subnet as the configuration gives it, parsed; IPv4-mapped IPv6 prefixes become IPv4 prefixes. */
export interface SubnetConfig {
  /** Canonical text (`10.20.0.0/16`, `2001:db8::/32`), as shown in errors and /explain. */
  readonly text: string;
  readonly address: IpAddress;
  /** Prefix length in bits of `address.family`. */
  readonly prefix: number;
}

/**
 * Client-subnet arithmetic for conditions and their ECS scope (RFC 7871 §7.2.1, docs/PRODUCT.md §8).
 * Addresses are {@link IpAddress} words; IPv4-mapped IPv6 is already folded to IPv4 on both
 * sides, so a mapped client matches IPv4 subnets — and an IPv4 subnet, seen from IPv6, is a
 * block inside `::ffff:0:0/96` that no (unfolded) IPv6 client is in.
 */

/**
 * Number of leading bits `a` and `b` share (0–32 for IPv4, 0–128 for IPv6); −1 when the
 * families differ.
 */
export function commonPrefixLength(a: IpAddress, b: IpAddress): number {
  return commonPrefixWords(a, b.family, b.w0, b.w1, b.w2, b.w3);
}

/**
 * {@link commonPrefixLength} against an address given as its family and words (the decision
 * cache keeps a record's subnets in typed arrays, read on every query).
 */
export function commonPrefixWords(a: IpAddress, family: number, w0: number, w1: number, w2: number, w3: number): number {
  if (a.family !== family) return -1;
  let x = (a.w0 ^ w0) >>> 0;
  if (x !== 0) return Math.clz32(x);
  if (family === 4) return 32;
  x = (a.w1 ^ w1) >>> 0;
  if (x !== 0) return 32 + Math.clz32(x);
  x = (a.w2 ^ w2) >>> 0;
  if (x !== 0) return 64 + Math.clz32(x);
  x = (a.w3 ^ w3) >>> 0;
  return x !== 0 ? 96 + Math.clz32(x) : 128;
}

/**
 * Membership of `client` in the subnet `network/prefix`, packed with the ECS scope it implies:
 * returns `prefix` (≥ 0) when the client is inside, else `−(k + 1) − 1` where `k + 1` is the
 * length of the largest aligned block around the client that does not touch the subnet.
 *
 * Why: aligned blocks nest or are disjoint. Inside the subnet, every block of length ≥ `prefix`
 * around the client stays inside it; outside, the block of length `k + 1` (k = bits the client
 * shares with the network, k < prefix) is the largest that excludes the whole subnet.
 * Across families (a client is never inside a subnet of the other family):
 * - an IPv6 client and an IPv4 subnet: the subnet lies inside `::ffff:0:0/96`, where clients are
 *   answered as IPv4, so the block must stay clear of that whole range (`ipv4InIpv6.ts`);
 * - an IPv4 client and an IPv6 subnet: no IPv4 address is in it, so every IPv4 client agrees
 *   (scope 0, returned as −1).
 */
export function subnetMembership(client: IpAddress, network: IpAddress, prefix: number): number {
  return subnetMembershipWords(client, network.family, network.w0, network.w1, network.w2, network.w3, prefix);
}

/**
 * {@link subnetMembership} against a network given as its family and words (the decision cache
 * keeps a record's subnets in typed arrays, read on every query).
 */
export function subnetMembershipWords(client: IpAddress, family: number, w0: number, w1: number, w2: number, w3: number, prefix: number): number {
  if (client.family === family) return membershipOf(commonPrefixWords(client, family, w0, w1, w2, w3), prefix);
  if (client.family === 6) return -outsideIpv4MappedScope(client) - 1;
  return -1;
}

/** {@link subnetMembership} from the bits `k` the client shares with the network (−1: other family). */
export function membershipOf(k: number, prefix: number): number {
  if (k < 0) return -1;
  if (k >= prefix) return prefix;
  return -(k + 1) - 1;
}

/** The ECS scope a {@link subnetMembership} result implies (prefix length in bits). */
export function membershipScope(m: number): number {
  return m >= 0 ? m : -m - 1;
}

/** True when two subnets share an address (same family, one contains the other). */
export function subnetsOverlap(a: IpAddress, aPrefix: number, b: IpAddress, bPrefix: number): boolean {
  const k = commonPrefixLength(a, b);
  return k >= 0 && k >= Math.min(aPrefix, bPrefix);
}
