import type { IpAddress } from './ipAddress.js';

/**
 * The IPv6 blocks that carry IPv4 addresses, each a border no ECS scope of an IPv6 client may
 * cross (RFC 7871 §7.3: a resolver serves an answer to every client inside the scope block).
 * Clients inside them are not answered like their IPv6 neighbours:
 * - `::ffff:0:0/96` (IPv4-mapped, RFC 4291 §2.5.5.2) is folded to IPv4 by the parser, so its
 *   clients get their IPv4 location and match IPv4 client subnets;
 * - `::/96` (IPv4-compatible, RFC 4291 §2.5.5.1) holds the IPv4 tree of a MaxMind IPv6 database,
 *   which also aliases `2002::/16` (6to4, RFC 3056 §2) and `2001::/32` (Teredo, RFC 4380 §4) to
 *   IPv4 data; the loader keeps `::/96` and the 6to4 alias out of the IPv6 table
 *   (`mmdbSource.ts`), so those clients read as unknown while their neighbours have locations;
 * - `64:ff9b::/96` (NAT64 well-known prefix, RFC 6052 §2.1) and `::ffff:0:0:0/96` (SIIT,
 *   RFC 2765 §2.1) embed IPv4 addresses of translated clients.
 * gdnsd keeps the same subspaces apart from the rest of IPv6 in its network trees.
 */
const BLOCKS: readonly { readonly w0: number; readonly w1: number; readonly w2: number; readonly prefix: number }[] = [
  { w0: 0, w1: 0, w2: 0xffff, prefix: 96 },
  { w0: 0, w1: 0, w2: 0, prefix: 96 },
  { w0: 0, w1: 0, w2: 0xffff0000, prefix: 96 },
  { w0: 0x0064ff9b, w1: 0, w2: 0, prefix: 96 },
  { w0: 0x20010000, w1: 0, w2: 0, prefix: 32 },
  { w0: 0x20020000, w1: 0, w2: 0, prefix: 16 },
];

/**
 * The shortest ECS scope (prefix length in bits) an IPv6 client may be given once its answer
 * depends on the client at all: the block around `a` reaches no IPv4-carrying block it is not
 * inside of, and stays inside the one it is in (its prefix length). 0 for an IPv4 address
 * (including a folded IPv4-mapped one), whose scope is counted in IPv4 bits.
 *
 * Why a floor and not a table entry: every IPv6 block a decision reads (a location range, a
 * client subnet, a client network) is a set of IPv6 addresses; what lies inside the blocks above
 * is answered from other data, so a scope crossing them would hand those clients an answer
 * computed for someone else. Costs a few word comparisons per read.
 */
export function ipv4BlocksScope(a: IpAddress): number {
  if (a.family === 4) return 0;
  let floor = 0;
  for (let i = 0; i < BLOCKS.length; i++) {
    const b = BLOCKS[i]!;
    const k = sharedBits(a, b.w0, b.w1, b.w2);
    // Inside: the block's own length; outside: one bit more than they share (the largest aligned
    // block around the client that does not touch it).
    const scope = k >= b.prefix ? b.prefix : k + 1;
    if (scope > floor) floor = scope;
  }
  return floor;
}

/** Leading bits `a` shares with the 96-bit network `w0:w1:w2` (at most 96). */
function sharedBits(a: IpAddress, w0: number, w1: number, w2: number): number {
  let x = (a.w0 ^ w0) >>> 0;
  if (x !== 0) return Math.clz32(x);
  x = (a.w1 ^ w1) >>> 0;
  if (x !== 0) return 32 + Math.clz32(x);
  x = (a.w2 ^ w2) >>> 0;
  return x !== 0 ? 64 + Math.clz32(x) : 96;
}

/**
 * For an IPv6 address: one more than the bits it shares with `::ffff:0:0/96`, i.e. the prefix
 * length of the largest aligned block around it that holds no IPv4-mapped address. Every IPv4
 * address a condition or a table speaks of lies in that block once seen from IPv6, so this is
 * how far an IPv6 client's answer may reach when it read an IPv4 input.
 */
export function outsideIpv4MappedScope(a: IpAddress): number {
  return sharedBits(a, 0, 0, 0xffff) + 1;
}
