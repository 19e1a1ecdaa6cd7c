import { loadGeoAddon } from './nativeAddon.js';
import type { RangeIds } from './rangeTable.js';

/** Below this a table is not worth a 2 MiB page: rounding up would waste more than half of it. */
const MIN_BYTES = 1 << 20;

/**
 * Zeroed memory for a large, long-lived lookup table (the answer-class tables read once per
 * query), in 2 MiB transparent huge pages when the native addon is loaded (`hugePageBuffer`:
 * anonymous mmap, 2 MiB-aligned, `madvise(MADV_HUGEPAGE)`, so it works with THP in `madvise` mode).
 * A cold lookup then costs TLB misses on one or two huge pages instead of several 4 KiB ones,
 * which on a virtual machine (nested paging) are as costly as the cache misses themselves.
 * Returns undefined — the caller allocates an ordinary ArrayBuffer — for tables under 1 MiB,
 * without the addon (the TypeScript fallback), or when the kernel refuses the mapping.
 * @param bytes Size in bytes.
 */
export function hugePageBuffer(bytes: number): ArrayBuffer | undefined {
  if (bytes < MIN_BYTES) return undefined;
  const buffer = loadGeoAddon().addon?.hugePageBuffer?.(bytes);
  if (buffer) mapped.add(buffer);
  return buffer;
}

/** The buffers {@link hugePageBuffer} mapped and {@link releaseHugePages} has not released. */
const mapped = new WeakSet<ArrayBuffer>();

/**
 * Unmaps a {@link hugePageBuffer} now rather than when V8 collects it (the addon detaches it: its
 * views get length 0 and the mapping is gone by the next turn of the event loop). Nothing happens
 * for any other buffer (the ordinary memory of small tables is left to the collector).
 * V8 counts these mappings as external memory but starts no collection for them on an idle
 * engine, so tables replaced by a reload are released this way (src/capabilities/geo/README.md).
 * @returns Whether `buffer` was a mapping and is released.
 */
export function releaseHugePages(buffer: ArrayBufferLike): boolean {
  if (!(buffer instanceof ArrayBuffer) || !mapped.delete(buffer)) return false;
  loadGeoAddon().addon!.releaseBuffer(buffer);
  return true;
}

/**
 * A range table's starts and ids copied end to end into one {@link hugePageBuffer} (for tables
 * kept as sorted starts, e.g. the answer classes' IPv6 tables), or the arrays themselves when
 * that gives no buffer. The copies have the same element types.
 */
export function rangesInHugePages<Ids extends RangeIds>(starts: Uint32Array, ids: Ids): { starts: Uint32Array; ids: Ids } {
  const buffer = hugePageBuffer(starts.byteLength + ids.byteLength);
  if (!buffer) return { starts, ids };
  const startsCopy = new Uint32Array(buffer, 0, starts.length);
  startsCopy.set(starts);
  const idsCopy = new (ids.constructor as new (b: ArrayBuffer, offset: number, length: number) => Ids)(buffer, starts.byteLength, ids.length);
  idsCopy.set(ids);
  return { starts: startsCopy, ids: idsCopy };
}
