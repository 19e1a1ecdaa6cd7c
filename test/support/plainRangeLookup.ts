/**
 * The plain definition of a range-table lookup, for differential tests of the fast layouts
 * (src/core/lpm/bucketRangeTable.ts, the answer classes' tables in huge pages): binary search for the
 * last start at or below the address, then the prefix of the largest aligned block around it
 * inside the range — one more than the bits the address shares with the address below the range
 * and with the next range's start, whichever is longer (RFC 7871 §7.2.1 scope; docs/PRODUCT.md §8).
 * @param starts Range starts, ascending, the first 0.
 * @param bits Address width: 32 (IPv4) or 128 (IPv6).
 * @returns Packed `id * 256 + prefix`, as the tables return it.
 */
export function plainRangeLookup(starts: readonly bigint[], ids: ArrayLike<number>, addr: bigint, bits: 32 | 128): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= addr) lo = mid;
    else hi = mid - 1;
  }
  const shared = (x: bigint): number => bits - x.toString(2).length;
  const fromLow = starts[lo] === 0n ? 0 : 1 + shared(addr ^ (starts[lo]! - 1n));
  const fromHigh = lo + 1 === starts.length ? 0 : 1 + shared(addr ^ starts[lo + 1]!);
  return ids[lo]! * 256 + Math.max(fromLow, fromHigh);
}
