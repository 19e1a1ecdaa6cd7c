import { addressFromBytes, familyBits, type IpAddress } from '../../geo/ipAddress.js';
import type { Client } from '../../selection/types.js';

/** EDNS option code of Client Subnet (RFC 7871 §6). */
export const ECS_OPTION_CODE = 8;

/** A validated ECS option from a query. */
export interface EcsOption {
  /**
   * Address family number as sent: 1 = IPv4, 2 = IPv6 (RFC 7871 §6, IANA address families), or 0
   * with a /0 source prefix (what `dig +subnet=0` sends; BIND and miekg/dns accept it too).
   */
  readonly family: 0 | 1 | 2;
  /** SOURCE PREFIX-LENGTH as sent, in bits of `family`. */
  readonly sourcePrefix: number;
  /** The address bytes as sent (ceil(sourcePrefix / 8) of them), echoed in the reply. */
  readonly addressBytes: Buffer;
  /** The address (IPv4-mapped IPv6 folded to IPv4). */
  readonly address: IpAddress;
  /** Source prefix in bits of `address.family` (mapped: sourcePrefix − 96, never below 0). */
  readonly effectivePrefix: number;
}

/**
 * Parses and validates the payload of an ECS option (RFC 7871 §6).
 * @returns the option, or a reason string when it is malformed (the caller answers FORMERR):
 *   unknown family, prefix longer than the family, address length not ceil(prefix/8), bits set
 *   beyond the prefix, or a non-zero SCOPE PREFIX-LENGTH in a query. Family 0 is accepted only with
 *   SOURCE PREFIX-LENGTH 0 and no address: the resolver asks that no client data be used.
 */
export function parseEcs(data: Buffer): EcsOption | string {
  if (data.length < 4) return 'ECS option shorter than 4 bytes';
  const family = data.readUInt16BE(0);
  const sourcePrefix = data[2]!;
  const scope = data[3]!;
  if (family === 0 && sourcePrefix === 0 && scope === 0 && data.length === 4) {
    return { family: 0, sourcePrefix: 0, addressBytes: data.subarray(4), address: addressFromBytes(4, data.subarray(4)), effectivePrefix: 0 };
  }
  if (family !== 1 && family !== 2) return `ECS family ${family} is not 1 (IPv4) or 2 (IPv6), nor 0 with a /0 prefix`;
  const bits = family === 1 ? 32 : 128;
  if (sourcePrefix > bits) return `ECS source prefix ${sourcePrefix} is longer than ${bits}`;
  if (scope !== 0) return 'ECS scope prefix must be 0 in a query';
  const addressBytes = data.subarray(4);
  if (addressBytes.length !== Math.ceil(sourcePrefix / 8)) return 'ECS address length does not match the source prefix';
  const spare = sourcePrefix % 8;
  if (spare !== 0 && (addressBytes[addressBytes.length - 1]! & (0xff >> spare)) !== 0) {
    return 'ECS address has bits set beyond the source prefix';
  }
  const address = addressFromBytes(family === 1 ? 4 : 6, addressBytes);
  const effectivePrefix = address.mapped ? Math.max(0, sourcePrefix - 96) : sourcePrefix;
  return { family, sourcePrefix, addressBytes, address, effectivePrefix };
}

/**
 * The SCOPE PREFIX-LENGTH to send back for an answer whose decision scope is `scope` bits of the
 * client's (folded) family. A source prefix of 0 means the resolver asked us not to use client
 * data: scope 0 (RFC 7871 §7.2.1). The same holds for an IPv4-mapped prefix of /96 or shorter,
 * which carries no IPv4 bits: the resolver's address decided, so no scope of the ECS address is
 * true. IPv4-mapped IPv6 otherwise keeps family 2 with 96 + the IPv4 scope.
 */
export function replyScope(ecs: EcsOption, scope: number): number {
  if (ecs.effectivePrefix === 0 || scope === 0) return 0;
  if (ecs.address.mapped) return Math.min(128, 96 + scope);
  return Math.min(familyBits(ecs.address.family), scope);
}

/**
 * The client a query is answered for (SPEC §2, RFC 7871 §7.1.1): the ECS address when the query
 * carries ECS with a source prefix > 0 (in bits of the folded family), else the resolver's address
 * `peer`. Shared by every front door that sees ECS, so they all select for the same client.
 */
export function clientFor(ecs: EcsOption | undefined, peer: IpAddress): Client {
  if (ecs && ecs.effectivePrefix > 0) return { address: ecs.address, sourcePrefix: ecs.effectivePrefix, fromEcs: true };
  return { address: peer, sourcePrefix: familyBits(peer.family), fromEcs: false };
}
