import { addressFromBytes, familyBits, ipv4, type IpAddress } from '../net/ipAddress.js';
import type { Client } from '../model/query.js';

/** EDNS option code of Client Subnet (RFC 7871 §6). */
export const ECS_OPTION_CODE = 8;

/** The client subnet of a validated ECS option from a query: what selecting and scoping need. */
export interface EcsSubnet {
  /**
   * Address family number as sent: 1 = IPv4, 2 = IPv6 (RFC 7871 §6, IANA address families), or 0
   * with a /0 source prefix (what `dig +subnet=0` sends; BIND and miekg/dns accept it too).
   */
  readonly family: 0 | 1 | 2;
  /** SOURCE PREFIX-LENGTH as sent, in bits of `family`. */
  readonly sourcePrefix: number;
  /** The address (IPv4-mapped IPv6 folded to IPv4). */
  readonly address: IpAddress;
  /** Source prefix in bits of `address.family` (mapped: sourcePrefix − 96, never below 0). */
  readonly effectivePrefix: number;
}

/** A validated ECS option from a query, with the address bytes a DNS reply echoes. */
export interface EcsOption extends EcsSubnet {
  /** The address bytes as sent (ceil(sourcePrefix / 8) of them), echoed in the reply. */
  readonly addressBytes: Buffer;
}

/**
 * Parses and validates the payload of an ECS option (RFC 7871 §6); see {@link readEcs}.
 * @returns the option, or a reason string when it is malformed (the caller answers FORMERR).
 */
export function parseEcs(data: Buffer): EcsOption | string {
  const subnet = readEcs(data, 0, data.length);
  if (typeof subnet === 'string') return subnet;
  const { family, sourcePrefix, address, effectivePrefix } = subnet;
  return { family, sourcePrefix, addressBytes: data.subarray(4), address, effectivePrefix };
}

/**
 * Validates the ECS option payload `data[start..end)` (RFC 7871 §6) and reads its client subnet
 * in place, for front doors that need no address bytes to echo (the compact protocol's shim
 * echoes them itself): no view of the payload is made.
 * @returns the subnet, or a reason string when it is malformed (the caller answers FORMERR):
 *   unknown family, prefix longer than the family, address length not ceil(prefix/8), bits set
 *   beyond the prefix, or a non-zero SCOPE PREFIX-LENGTH in a query. Family 0 is accepted only with
 *   SOURCE PREFIX-LENGTH 0 and no address: the resolver asks that no client data be used.
 */
export function readEcs(data: Uint8Array, start: number, end: number): EcsSubnet | string {
  const length = end - start;
  if (length < 4) return 'ECS option shorter than 4 bytes';
  const family = (data[start]! << 8) | data[start + 1]!;
  const sourcePrefix = data[start + 2]!;
  const scope = data[start + 3]!;
  if (family === 0 && sourcePrefix === 0 && scope === 0 && length === 4) {
    return { family: 0, sourcePrefix: 0, address: ipv4(0), effectivePrefix: 0 };
  }
  if (family !== 1 && family !== 2) return `ECS family ${family} is not 1 (IPv4) or 2 (IPv6), nor 0 with a /0 prefix`;
  const bits = family === 1 ? 32 : 128;
  if (sourcePrefix > bits) return `ECS source prefix ${sourcePrefix} is longer than ${bits}`;
  if (scope !== 0) return 'ECS scope prefix must be 0 in a query';
  if (length - 4 !== Math.ceil(sourcePrefix / 8)) return 'ECS address length does not match the source prefix';
  const spare = sourcePrefix % 8;
  if (spare !== 0 && (data[end - 1]! & (0xff >> spare)) !== 0) {
    return 'ECS address has bits set beyond the source prefix';
  }
  const address = addressFromBytes(family === 1 ? 4 : 6, data, start + 4, end);
  const effectivePrefix = address.mapped ? Math.max(0, sourcePrefix - 96) : sourcePrefix;
  return { family, sourcePrefix, address, effectivePrefix };
}

/**
 * The SCOPE PREFIX-LENGTH to send back for an answer whose decision scope is `scope` bits of the
 * client's (folded) family. A source prefix of 0 means the resolver asked us not to use client
 * data: scope 0 (RFC 7871 §7.2.1). The same holds for an IPv4-mapped prefix of /96 or shorter,
 * which carries no IPv4 bits: the resolver's address decided, so no scope of the ECS address is
 * true. IPv4-mapped IPv6 otherwise keeps family 2 with 96 + the IPv4 scope.
 */
export function replyScope(ecs: EcsSubnet, scope: number): number {
  if (ecs.effectivePrefix === 0 || scope === 0) return 0;
  if (ecs.address.mapped) return Math.min(128, 96 + scope);
  return Math.min(familyBits(ecs.address.family), scope);
}

/**
 * The client a query is answered for (docs/PRODUCT.md §2, RFC 7871 §7.1.1): the ECS address when the query
 * carries ECS with a source prefix > 0 (in bits of the folded family), else the resolver's address
 * `peer`. Shared by every front door that sees ECS, so they all select for the same client. An
 * ECS client keeps `peer` as its `resolver` (the probe-request queue probes resolvers).
 */
export function clientFor(ecs: EcsSubnet | undefined, peer: IpAddress): Client {
  if (ecs && ecs.effectivePrefix > 0) return { address: ecs.address, sourcePrefix: ecs.effectivePrefix, fromEcs: true, resolver: peer };
  return { address: peer, sourcePrefix: familyBits(peer.family), fromEcs: false };
}
