import { verifyImage, verifyRecords, type LocationImage } from './compiledImage.js';
import { ImageLocationTable } from './imageLocationTable.js';
import { type LocationDb } from '../../core/location/locationDb.js';
import { RangeLocationDb } from './rangeLocationDb.js';
import { loadGeoAddon } from '../../core/lpm/nativeAddon.js';
import { NativeLocationDb } from './nativeLocationDb.js';
import { RangeTable4, RangeTable6 } from '../../core/lpm/rangeTable.js';

/** Which implementation answers lookups: the addon when it loads (`auto`), or one forced. */
export type GeoImplementation = 'auto' | 'native' | 'typescript';

/** An opened database, and why it is not native when `auto` fell back. */
export interface OpenedLocationDb {
  readonly db: LocationDb;
  /** Set when `auto` fell back to TypeScript: the addon's load error. */
  readonly fallbackReason?: string;
}

/**
 * Opens a compiled image with the native addon or the TypeScript reference, each of which first
 * checks the image's contents (ascending ranges, ids in range). Both read the same bytes; the TypeScript tables build their own 16-bit direct index (so the native 20-bit index in
 * the file is checked against an independent one by the differential tests).
 * @throws ImageError/RangeError for a malformed image; Error when `native` is forced and the addon
 *   is unavailable.
 */
export function openLocationDb(image: LocationImage, implementation: GeoImplementation): OpenedLocationDb {
  if (implementation !== 'typescript') {
    const load = loadGeoAddon();
    if (load.addon) {
      verifyRecords(image);
      return { db: new NativeLocationDb(load.addon, image) };
    }
    if (implementation === 'native') throw new Error(`geo.implementation is native but the addon at ${load.path} does not load: ${load.error}`);
    return { db: typescriptDb(image), fallbackReason: `native addon not loaded (${load.error})` };
  }
  return { db: typescriptDb(image) };
}

function typescriptDb(image: LocationImage): LocationDb {
  verifyImage(image);
  const addon = loadGeoAddon().addon;
  return new RangeLocationDb(
    new ImageLocationTable(image),
    new RangeTable4(image.v4.starts, image.v4.ids),
    new RangeTable6(image.v6.starts, image.v6.ids),
    image.metadata.sources,
    // Detaching needs the addon; without it the collector frees the image.
    addon && image.ownsBuffer ? () => addon.releaseBuffer(image.buffer) : undefined,
  );
}
