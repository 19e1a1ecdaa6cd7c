import type { GeoSourceConfig } from './geoSchema.js';
import { writeImage, type LocationImage } from './compiledImage.js';
import { customOverlay, type GeoCustomEntryConfig } from './customEntries.js';
import type { LoadMode, SkippedLines } from './delimitedFile.js';
import type { FamilyTilings, LocationFormat, OverlayLayer } from './locationFormat.js';
import { LOCATION_FORMATS } from './locationFormats.js';
import { LocationRecords } from './locationRecords.js';
import { LocationTable } from './locationTable.js';
import { joinTilings, type Tiling } from '../../core/lpm/tiling.js';

/** What to build a location image from: the `geo` section's sources and custom entries. */
export interface BuildInput {
  readonly sources: readonly GeoSourceConfig[];
  readonly custom: readonly GeoCustomEntryConfig[];
  readonly mode: LoadMode;
  /** Resolves a source's `path` or `package` to a file. */
  readonly resolvePath: (source: GeoSourceConfig) => string;
  /** The formats the sources are of; default {@link LOCATION_FORMATS}. */
  readonly formats?: readonly LocationFormat[];
  /** The sources' stamp to record in the metadata (`compiledCache.ts`), when building a configuration's cache. */
  readonly stamp?: string;
}

/** A built image and what the build skipped. */
export interface BuildResult {
  readonly image: Uint8Array;
  readonly skipped: SkippedLines;
  readonly sources: readonly string[];
}

/**
 * Builds a compiled location image (see `compiledImage.ts`) from location sources, each read by
 * the loader of its format (`locationFormat.ts`), in order:
 * 1. location layers (mmdb, NetScaler, ip-location-db country/city): each later source replaces
 *    the earlier ones where it has data (so an IPv4 file and an IPv6 file combine, and a local
 *    NetScaler file can refine a MaxMind database);
 * 2. overlays (ip-location-db asn: set ISP, qualifier 6 and ASN) where they have data;
 * 3. custom entries: replace everything inside their ranges.
 * Neighbouring ranges with the same final location merge, so prefix lengths are those of the
 * largest blocks with identical locations; unused locations are dropped.
 * @throws Error naming the source (`location source FILE: …`, with `file:line` for bad lines in
 *   strict mode); Error for a source whose format is not in the list (the schema of the same list
 *   rejects it first).
 */
export function buildLocationImage(input: BuildInput): BuildResult {
  const formats = new Map((input.formats ?? LOCATION_FORMATS).map((f) => [f.name, f]));
  const table = new LocationTable();
  const skipped: SkippedLines = { count: 0, first: [] };
  const context = { table, mode: input.mode, skipped };
  const names: string[] = [];
  let acc: FamilyTilings | undefined;
  const overlays: OverlayLayer[] = [];
  for (const src of input.sources) {
    const format = formats.get(src.format);
    if (format === undefined) throw new Error(`location source format "${src.format}" is not one of ${[...formats.keys()].join(', ')}`);
    const file = input.resolvePath(src);
    const name = src.package ?? file;
    names.push(name);
    try {
      const layer = format.load(file, src, context);
      if (layer.kind === 'overlay') overlays.push(layer);
      else acc = acc === undefined ? layer : overlay(acc, layer, (base, top) => (top !== 0 ? top : base));
    } catch (e) {
      throw new Error(`location source ${name}: ${(e as Error).message}`, { cause: e });
    }
  }
  let result: FamilyTilings = acc ?? { v4: emptyTiling(1), v6: emptyTiling(4) };
  for (const layer of overlays) {
    // One location per (location, overlay value) pair: refined once, interned once.
    const combined = new Map<number, number>();
    result = overlay(result, layer, (loc, value) => {
      if (value === 0) return loc;
      const key = loc * 2 ** 22 + value;
      let id = combined.get(key);
      if (id === undefined) {
        id = table.intern(layer.refine(table.get(loc), value));
        combined.set(key, id);
      }
      return id;
    });
  }
  if (input.custom.length > 0) {
    const custom = customOverlay(input.custom);
    const ids = custom.locations.map((l) => table.intern(l));
    result = overlay(result, custom, (base, c) => (c !== 0 ? ids[c - 1]! : base));
    names.push('custom entries');
  }
  const { records, v4, v6 } = compact(table, result);
  return {
    image: writeImage(records, v4, v6, { sources: names, builtAt: new Date().toISOString(), ...(input.stamp !== undefined ? { stamp: input.stamp } : {}) }),
    skipped,
    sources: names,
  };
}

/**
 * Applies custom entries to a compiled image (for `geo.compiled` plus `geo.custom`): the image's
 * locations are copied, custom locations appended unless an equal one exists, and the tilings
 * re-joined. Returns a new image; the input is not modified.
 */
export function applyCustomEntries(image: LocationImage, custom: readonly GeoCustomEntryConfig[]): Uint8Array {
  if (custom.length === 0) return new Uint8Array(image.buffer);
  const records = LocationRecords.fromImage(image);
  const overlayData = customOverlay(custom);
  const ids = overlayData.locations.map((l) => records.findOrAdd(l));
  const pick = (base: number, c: number): number => (c !== 0 ? ids[c - 1]! : base);
  const v4 = joinTilings(4, image.v4, overlayData.v4, pick);
  const v6 = joinTilings(6, image.v6, overlayData.v6, pick);
  const metadata = { sources: [...image.metadata.sources, 'custom entries'], builtAt: image.metadata.builtAt };
  return writeImage(records, v4, v6, metadata, { v4: image.v4.indexBits, v6: image.v6.indexBits });
}

function overlay(base: FamilyTilings, top: FamilyTilings, combine: (base: number, top: number) => number): FamilyTilings {
  return { v4: joinTilings(4, base.v4, top.v4, combine), v6: joinTilings(6, base.v6, top.v6, combine) };
}

function emptyTiling(stride: number): Tiling {
  return { starts: new Uint32Array(stride), ids: new Uint32Array(1) };
}

/** Renumbers the locations the tilings use (in first-use order after id 0) and drops the rest. */
function compact(table: LocationTable, t: FamilyTilings): { records: LocationRecords; v4: Tiling; v6: Tiling } {
  const newId = new Int32Array(table.size).fill(-1);
  newId[0] = 0;
  const kept = new LocationTable();
  const remap = (tiling: Tiling): Tiling => {
    const ids = new Uint32Array(tiling.ids.length);
    for (let i = 0; i < ids.length; i++) {
      const old = tiling.ids[i]!;
      if (newId[old]! < 0) newId[old] = kept.intern(table.get(old));
      ids[i] = newId[old]!;
    }
    return { starts: tiling.starts, ids };
  };
  const v4 = remap(t.v4);
  const v6 = remap(t.v6);
  return { records: LocationRecords.fromTable(kept), v4, v6 };
}
