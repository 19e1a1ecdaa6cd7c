import { addressToBytes, familyBits, maskAddress, parseIp, sameAddress, type IpAddress } from '../../geo/ipAddress.js';
import type { Client } from '../../selection/types.js';
import { replyScope, type EcsOption } from '../dns/ecsOption.js';

/** Who a PowerDNS `lookup` is for, read from its `remote` and `real-remote` parameters. */
export interface RemoteClient {
  readonly client: Client;
  /**
   * The ECS option of the query as PowerDNS received it (family, source prefix, address), or
   * undefined when the query had none. PowerDNS only passes it with `edns-subnet-processing=yes`.
   */
  readonly ecs: EcsOption | undefined;
  /**
   * True for lookups PowerDNS makes without a query packet: the zone's SOA lookup (at start, and
   * before every query that the query cache does not answer) and AXFR. Their records never reach
   * a client as answers.
   */
  readonly packetless: boolean;
}

/**
 * Reads the client of a lookup (notes §3.2, PowerDNS 4.7.3 `RemoteBackend::lookup`):
 * - packet-less lookups carry `remote` "0.0.0.0" and `real-remote` "0.0.0.0/0": the client is
 *   0.0.0.0 with a full-length prefix;
 * - a query without ECS carries `real-remote` = `remote` + "/32" (or "/128"): the client is the
 *   resolver's address, as in the standalone listener;
 * - otherwise `real-remote` is the ECS source prefix as sent: the ECS address is the client when
 *   its source prefix is > 0 (RFC 7871 §7.1.1: /0 asks us not to use client data, so the resolver
 *   address is used), IPv4-mapped IPv6 folded to IPv4 with its prefix reduced by 96.
 * Host bits beyond the prefix are cleared rather than rejected.
 * @throws Error naming the parameter when an address or prefix length is invalid.
 */
export function remoteClient(realRemote: string, remote: string): RemoteClient {
  let peer: IpAddress;
  try {
    peer = parseIp(remote);
  } catch {
    throw new Error(`lookup parameter "remote" is not an address: ${JSON.stringify(remote)}`);
  }
  const slash = realRemote.lastIndexOf('/');
  const lengthText = slash < 0 ? '' : realRemote.slice(slash + 1);
  let address: IpAddress;
  try {
    address = parseIp(slash < 0 ? realRemote : realRemote.slice(0, slash));
  } catch {
    throw new Error(`lookup parameter "real-remote" is not addr/len: ${JSON.stringify(realRemote)}`);
  }
  const sentBits = address.mapped ? 128 : familyBits(address.family);
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > sentBits) {
    throw new Error(`lookup parameter "real-remote" has no valid prefix length: ${JSON.stringify(realRemote)}`);
  }
  const sourcePrefix = Number(lengthText);
  const packetless = sourcePrefix === 0 && remote === '0.0.0.0';
  const fullLength = sourcePrefix === sentBits;
  if (packetless || (fullLength && sameAddress(address, peer))) {
    return { client: { address: peer, sourcePrefix: familyBits(peer.family), fromEcs: false }, ecs: undefined, packetless };
  }
  const effectivePrefix = address.mapped ? Math.max(0, sourcePrefix - 96) : sourcePrefix;
  const masked = maskAddress(address, effectivePrefix);
  const ecs: EcsOption = {
    family: address.family === 4 && !address.mapped ? 1 : 2,
    sourcePrefix,
    addressBytes: Buffer.from(addressToBytes(masked).subarray(0, Math.ceil(sourcePrefix / 8))),
    address: masked,
    effectivePrefix,
  };
  const client: Client =
    effectivePrefix > 0
      ? { address: masked, sourcePrefix: effectivePrefix, fromEcs: true }
      : { address: peer, sourcePrefix: familyBits(peer.family), fromEcs: false };
  return { client, ecs, packetless: false };
}

/**
 * The `scopeMask` to send with an RRset whose selection scope is `scope` (bits of the client's
 * family). PowerDNS copies the largest scopeMask of a response into its ECS option verbatim,
 * without clamping or family checks (notes §5.3), so this is exactly the scope the standalone
 * listener would put on the wire (`replyScope`: 0 for a /0 source, 96 + v4 scope for mapped
 * IPv4, never beyond the family). Without ECS nothing reaches the wire, but a non-zero mask still
 * keeps PowerDNS from caching a client-dependent RRset for everyone (notes §5.5).
 */
export function scopeMask(rc: RemoteClient, scope: number): number {
  if (scope === 0) return 0;
  if (rc.ecs) return replyScope(rc.ecs, scope);
  return Math.min(familyBits(rc.client.address.family), scope);
}
