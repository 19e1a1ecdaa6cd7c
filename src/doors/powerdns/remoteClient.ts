import { familyBits, ipv4, ipv6, maskAddress, parseIp, sameAddress, type IpAddress } from '../../core/net/ipAddress.js';
import type { Client } from '../../core/model/query.js';
import { clientFor, replyScope, type EcsOption } from '../../core/wire/ecsOption.js';

/** Who a PowerDNS `lookup` is for, read from its `remote` and `real-remote` parameters. */
export interface RemoteClient {
  readonly client: Client;
  /**
   * The ECS option of the query as PowerDNS received it (family, source prefix, address; not its
   * raw address bytes: PowerDNS writes the reply option itself), or undefined when the query had
   * none. PowerDNS only passes it with `edns-subnet-processing=yes`.
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
 * Reads the client of a lookup (docs/notes/powerdns-remote-backend.md §3.2, PowerDNS 4.7.3 `RemoteBackend::lookup`):
 * - packet-less lookups carry `remote` "0.0.0.0" and `real-remote` "0.0.0.0/0": the client is
 *   0.0.0.0 with a full-length prefix;
 * - a query without ECS carries `real-remote` = `remote` + "/32" (or "/128"): the client is the
 *   resolver's address, as in the standalone listener;
 * - otherwise `real-remote` is the ECS source prefix as sent, IPv4-mapped IPv6 folded to IPv4
 *   with its prefix reduced by 96, and the client is chosen by every door's rule
 *   ({@link clientFor}): the ECS address when its source prefix is > 0 (RFC 7871 §7.1.1: /0 asks
 *   us not to use client data, so the resolver address is used).
 * Host bits beyond the prefix are cleared rather than rejected.
 * @throws Error naming the parameter when an address or prefix length is invalid.
 */
export function remoteClient(realRemote: string, remote: string): RemoteClient {
  if (realRemote === '0.0.0.0/0' && remote === '0.0.0.0') return PACKETLESS;
  const peer = peerAddress(remote);
  const slash = realRemote.lastIndexOf('/');
  const addressEnd = slash < 0 ? realRemote.length : slash;
  let address: IpAddress;
  try {
    address = parseAddress(realRemote, addressEnd);
  } catch {
    throw new Error(`lookup parameter "real-remote" is not addr/len: ${JSON.stringify(realRemote)}`);
  }
  const sentBits = address.mapped ? 128 : familyBits(address.family);
  const sourcePrefix = slash < 0 ? -1 : prefixLength(realRemote, slash + 1);
  if (sourcePrefix < 0 || sourcePrefix > sentBits) {
    throw new Error(`lookup parameter "real-remote" has no valid prefix length: ${JSON.stringify(realRemote)}`);
  }
  if (sourcePrefix === sentBits && sameAddress(address, peer)) return { client: clientFor(undefined, peer), ecs: undefined, packetless: false };
  const effectivePrefix = address.mapped ? Math.max(0, sourcePrefix - 96) : sourcePrefix;
  const masked = maskAddress(address, effectivePrefix);
  const ecs: EcsOption = { family: address.family === 4 && !address.mapped ? 1 : 2, sourcePrefix, addressBytes: NO_BYTES, address: masked, effectivePrefix };
  return { client: clientFor(ecs, peer), ecs, packetless: false };
}

/**
 * The resolver's address (`remote`): the same few resolvers send almost every query, so the last
 * one parsed is kept (addresses are immutable) and a lookup from it parses nothing.
 */
let lastRemote = '';
let lastPeer: IpAddress | undefined;

function peerAddress(remote: string): IpAddress {
  if (remote === lastRemote && lastPeer !== undefined) return lastPeer;
  let peer: IpAddress;
  try {
    peer = parseAddress(remote, remote.length);
  } catch {
    throw new Error(`lookup parameter "remote" is not an address: ${JSON.stringify(remote)}`);
  }
  lastRemote = remote;
  lastPeer = peer;
  return peer;
}

const NO_BYTES = Buffer.alloc(0);
const PACKETLESS: RemoteClient = { client: { address: ipv4(0), sourcePrefix: 32, fromEcs: false }, ecs: undefined, packetless: true };

/** A client the data does not locate: the record's default policy answers. */
const UNLOCATED: RemoteClient = { client: { address: ipv4(0), sourcePrefix: 32, fromEcs: false }, ecs: undefined, packetless: false };

/**
 * The client of a lookup whose `real-remote` is invalid or missing: the resolver (`remote`)
 * without ECS, as for a query without ECS; when `remote` is not an address either, a client
 * without location, so the record's default policy answers. PowerDNS always sends both for a
 * real query: a bad one is a backend-protocol peer's mistake, and answering from what is known
 * serves the client better than SERVFAIL.
 */
export function fallbackClient(remote: string): RemoteClient {
  try {
    return { client: clientFor(undefined, peerAddress(remote)), ecs: undefined, packetless: false };
  } catch {
    return UNLOCATED;
  }
}

/**
 * Parses the address in `text[0, end)` as PowerDNS prints it (`ComboAddress::toString`: dotted-quad IPv4, RFC 5952
 * IPv6) on a fast path without regular expressions or exceptions (this runs for every lookup);
 * anything the fast path does not take (zone ids, leading zeros, odd forms) goes to
 * {@link parseIp}, which accepts or rejects it.
 * @throws Error when the text is not an address.
 */
function parseAddress(text: string, end: number): IpAddress {
  const colon = text.indexOf(':');
  return (colon >= 0 && colon < end ? fastIpv6(text, end) : fastIpv4(text, 0, end)) ?? parseIp(text.slice(0, end));
}

/** Dotted-quad IPv4 in `text[start, end)` as a 32-bit value, or undefined. */
function ipv4Value(text: string, start: number, end: number): number | undefined {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return undefined;
      octet = octet * 10 + (c - 48);
      if (octet > 255) return undefined;
      digits++;
    } else if (c === 46 && digits > 0 && dots < 3) {
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else {
      return undefined;
    }
  }
  return dots === 3 && digits > 0 ? value * 256 + octet : undefined;
}

function fastIpv4(text: string, start: number, end: number): IpAddress | undefined {
  const v = ipv4Value(text, start, end);
  return v === undefined ? undefined : ipv4(v);
}

/** The groups of the IPv6 address being parsed (one parse at a time: no array per address). */
const groups = new Int32Array(8);

/** IPv6 with at most one `::` and an optional dotted-quad tail in `text[0, end)`, or undefined. */
function fastIpv6(text: string, end: number): IpAddress | undefined {
  let n = 0;
  let gap = -1;
  let i = 0;
  if (end >= 2 && text.charCodeAt(0) === 58 && text.charCodeAt(1) === 58) {
    gap = 0;
    i = 2;
  }
  while (i < end) {
    let j = i;
    let v = 0;
    while (j < end && j - i < 5) {
      const c = text.charCodeAt(j);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
      if (d < 0) break;
      v = v * 16 + d;
      j++;
    }
    if (j < end && text.charCodeAt(j) === 46) {
      const tail = ipv4Value(text, i, end);
      if (tail === undefined || n > 6) return undefined;
      groups[n++] = tail >>> 16;
      groups[n++] = tail & 0xffff;
      i = end;
      break;
    }
    if (j === i || j - i > 4 || n === 8) return undefined;
    groups[n++] = v;
    if (j === end) {
      i = end;
      break;
    }
    if (text.charCodeAt(j) !== 58) return undefined;
    if (j + 1 < end && text.charCodeAt(j + 1) === 58) {
      if (gap >= 0) return undefined;
      gap = n;
      i = j + 2;
    } else {
      i = j + 1;
      if (i === end) return undefined;
    }
  }
  if ((gap < 0 && n !== 8) || (gap >= 0 && n === 8)) return undefined;
  if (gap >= 0) {
    // Groups after the gap move to the end; the gap's groups are zero.
    const shift = 8 - n;
    for (let k = n - 1; k >= gap; k--) groups[k + shift] = groups[k]!;
    for (let k = gap; k < gap + shift; k++) groups[k] = 0;
  }
  return ipv6((groups[0]! << 16) | groups[1]!, (groups[2]! << 16) | groups[3]!, (groups[4]! << 16) | groups[5]!, (groups[6]! << 16) | groups[7]!);
}

/** The decimal prefix length after the slash (1–3 digits), or −1. */
function prefixLength(text: string, start: number): number {
  const n = text.length - start;
  if (n < 1 || n > 3) return -1;
  let v = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
}

/**
 * The `scopeMask` to send with an RRset whose selection scope is `scope` (bits of the client's
 * family). PowerDNS copies the largest scopeMask of a response into its ECS option verbatim,
 * without clamping or family checks (docs/notes/powerdns-remote-backend.md §5.3), so this is exactly the scope the standalone
 * listener would put on the wire (`replyScope`: 0 for a /0 source, 96 + v4 scope for mapped
 * IPv4, never beyond the family). Without ECS nothing reaches the wire, but a non-zero mask still
 * keeps PowerDNS from caching a client-dependent RRset for everyone (docs/notes/powerdns-remote-backend.md §5.5).
 */
export function scopeMask(rc: RemoteClient, scope: number): number {
  if (scope === 0) return 0;
  if (rc.ecs) return replyScope(rc.ecs, scope);
  return Math.min(familyBits(rc.client.address.family), scope);
}
