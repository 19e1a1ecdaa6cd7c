import { ipv4, ipv6, maskAddress, type IpAddress } from '../../../src/core/net/ipAddress.js';
import type { RangeLocationDb } from '../../../src/capabilities/geo/rangeLocationDb.js';
import type { Client } from '../../../src/core/model/query.js';
import { seededRandom } from '../../support/seededRandom.js';

/** Where a benchmark client address comes from. */
export type ClientKind = 'ipv4-known' | 'ipv6-known' | 'ipv4-unknown';

/** A client as a resolver would send it in ECS: a /24 (IPv4) or /56 (IPv6) source prefix. */
export interface MixClient extends Client {
  readonly kind: ClientKind;
}

/** Shares of the realistic mix: mostly IPv4 inside real networks, some IPv6, some without a location. */
export const CLIENT_MIX_SHARES: Readonly<Record<ClientKind, number>> = { 'ipv4-known': 0.8, 'ipv6-known': 0.1, 'ipv4-unknown': 0.1 };

/** ECS source prefixes resolvers commonly send (RFC 7871 §11.1 recommends at most /24 and /56). */
const ECS_PREFIX = { 4: 24, 6: 56 } as const;

/** IPv4 space that never carries real clients: 0/8, 10/8, 100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16, 224/3. */
function isSpecialPurpose(a: number): boolean {
  const o1 = a >>> 24;
  const o2 = (a >>> 16) & 0xff;
  return (
    o1 === 0 ||
    o1 === 10 ||
    o1 === 127 ||
    o1 >= 224 ||
    (o1 === 100 && (o2 & 0xc0) === 64) ||
    (o1 === 169 && o2 === 254) ||
    (o1 === 172 && (o2 & 0xf0) === 16) ||
    (o1 === 192 && o2 === 168)
  );
}

/**
 * `n` ECS clients drawn with a fixed seed: networks are picked uniformly among the data's merged
 * ranges (so small real networks count as much as large ones, as they do for resolvers), the
 * address uniformly inside the range, then truncated to the ECS source prefix. `ipv4-unknown`
 * clients come from public IPv4 space the data has no location for (e.g. anycast blocks).
 */
export function clientMix(db: RangeLocationDb, n: number, seed: number): MixClient[] {
  const random = seededRandom(seed);
  const out: MixClient[] = [];
  const kinds = Object.entries(CLIENT_MIX_SHARES) as [ClientKind, number][];
  for (const [kind, share] of kinds) {
    const count = Math.round(n * share);
    for (let i = 0; i < count; i++) {
      const address = kind === 'ipv6-known' ? knownV6(db, random) : knownOrUnknownV4(db, random, kind === 'ipv4-known');
      const sourcePrefix = ECS_PREFIX[address.family];
      out.push({ kind, address: maskAddress(address, sourcePrefix), sourcePrefix, fromEcs: true });
    }
  }
  // Interleave the kinds as real traffic would: Fisher–Yates with the same seed.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function knownOrUnknownV4(db: RangeLocationDb, random: () => number, known: boolean): IpAddress {
  const { starts, ids } = db.v4;
  for (;;) {
    const i = Math.floor(random() * ids.length);
    if ((ids[i] !== 0) !== known) continue;
    const start = starts[i]!;
    const end = i + 1 < starts.length ? starts[i + 1]! - 1 : 0xffffffff;
    const a = (start + Math.floor(random() * (end - start + 1))) >>> 0;
    if (!known && isSpecialPurpose(a)) continue;
    return ipv4(a);
  }
}

/** The start of a random IPv6 range with a location (its low bits are cut by the /56 anyway). */
function knownV6(db: RangeLocationDb, random: () => number): IpAddress {
  const { starts, ids } = db.v6;
  for (;;) {
    const i = Math.floor(random() * ids.length);
    if (ids[i] === 0) continue;
    return ipv6(starts[i * 4]!, starts[i * 4 + 1]!, starts[i * 4 + 2]!, starts[i * 4 + 3]!);
  }
}
