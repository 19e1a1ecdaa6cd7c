/** The initial TTLs (IPv4) and hop limits (IPv6) hosts send with: Linux and most Unix 64, Windows 128, network gear 255. */
const INITIAL_TTLS = [64, 128, 255] as const;

/**
 * The hop count of a path from the TTL (IPv4) or hop limit (IPv6) of a reply received over it: the
 * sender's initial value is inferred as the next of 64, 128 and 255 at or above the received one
 * (issue 19, docs/PRODUCT.md §5 `client.hops`), and every router on the way took one off. A TTL of 0
 * or above 255 cannot arrive.
 * @throws RangeError for a TTL outside 1..255.
 */
export function hopsFromTtl(ttl: number): number {
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 255) throw new RangeError(`a received TTL is 1..255, not ${ttl}`);
  return INITIAL_TTLS.find((initial) => initial >= ttl)! - ttl;
}
