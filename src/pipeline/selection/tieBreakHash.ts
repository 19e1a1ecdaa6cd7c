import { maskWord } from '../../core/net/ipAddress.js';
import type { SelectionState } from './stage.js';

/**
 * The deterministic tie-break of multi-source selection (docs/PRODUCT.md §3 "ties are broken
 * deterministically and documented"): among tied members (data centers at the pickDcCount cut,
 * endpoints at a top-N cut), each member scores `mix32(hash(member) ^ clientHash)` where
 * `clientHash` mixes the record name with the client network (the client address masked to
 * the metric store's client network length, /24 and /48 by default); the highest scores win.
 *
 * This is rendezvous (highest-random-weight) hashing (Thaler and Ravishankar, "Using
 * name-based mappings to increase hit rates", IEEE/ACM ToN 6(1), 1998): a client network keeps
 * its member while that member stays tied, the same on every engine replica and across
 * restarts (no seed, no process state), and when a member leaves only its own clients move.
 * The hashes are FNV-1a (32-bit, over UTF-16 code units) and the MurmurHash3 finaliser.
 *
 * A decision that used it depends on the client network, so its ECS scope is that network's
 * length ({@link clientNetworkPrefix}).
 */

/** FNV-1a, 32-bit, over the string's UTF-16 code units. */
export function stableHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: every input bit flips each output bit with probability ≈ ½. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Bits that define the client's network for its family (the metric store's client network length). */
export function clientNetworkPrefix(s: SelectionState): number {
  const p = s.env.metrics.clientNetworkPrefix;
  return s.client.address.family === 4 ? p.ipv4 : p.ipv6;
}

/**
 * Hash of (record name, client network). Callers that let it decide must
 * `narrowScope(s, clientNetworkPrefix(s))`.
 */
export function clientTieBreakHash(s: SelectionState): number {
  const a = s.client.address;
  const bits = clientNetworkPrefix(s);
  let h = stableHash(s.record.name) ^ a.family;
  h = mix32(h ^ (a.w0 & maskWord(bits)));
  if (a.family === 6) {
    h = mix32(h ^ (a.w1 & maskWord(bits - 32)));
    h = mix32(h ^ (a.w2 & maskWord(bits - 64)));
    h = mix32(h ^ (a.w3 & maskWord(bits - 96)));
  }
  return h;
}

/** The score of a member (its name hashed with {@link stableHash}) for a client; higher wins. */
export function rendezvousScore(memberHash: number, clientHash: number): number {
  return mix32(memberHash ^ clientHash);
}

/**
 * The `room` members with the highest rendezvous scores, best first (equal scores keep input
 * order). `key` names a member.
 */
export function rendezvousChoose<T>(members: readonly T[], room: number, clientHash: number, key: (m: T) => string): T[] {
  const scored = members.map((m, i) => ({ m, i, score: rendezvousScore(stableHash(key(m)), clientHash) }));
  scored.sort((x, y) => y.score - x.score || x.i - y.i);
  const out: T[] = [];
  for (let i = 0; i < room && i < scored.length; i++) out.push(scored[i]!.m);
  return out;
}
