import { decodeLocation, type LocationImage } from './compiledImage.js';
import { ImageLocationTable } from './imageLocationTable.js';
import type { IpAddress } from '../../core/net/ipAddress.js';
import { UNKNOWN_LOCATION, type Location } from '../../core/location/location.js';
import type { LocationDb, LocationDbSummary, LocationTilings } from '../../core/location/locationDb.js';
import type { GeoAddon, NativeTable } from '../../core/lpm/nativeAddon.js';
import { ReleaseState } from '../../core/location/locationDbRelease.js';
import { runSteps } from '../../pipeline/selection/steps.js';

/**
 * The location database answered by the native addon (`native/`), over a compiled image held in
 * memory. The query path is one N-API call with no string parsing and no allocation: IPv4 passes
 * the address as a number; IPv6 writes four words into the addon's scratch buffer and calls with
 * no arguments (docs/notes/lpm.md §3.5). Results are identical to {@link RangeLocationDb}
 * over the same image (differential tests in test/geo/).
 */
export class NativeLocationDb implements LocationDb {
  readonly implementation = 'native' as const;
  private readonly table: NativeTable;
  private readonly scratch: Uint32Array;
  private readonly locations: ImageLocationTable;
  private readonly releaseState = new ReleaseState();

  /** @throws RangeError when the addon rejects the image layout. */
  constructor(
    private readonly addon: GeoAddon,
    readonly image: LocationImage,
  ) {
    this.table = addon.open(image.buffer, image.layout);
    this.scratch = new Uint32Array(addon.scratch6());
    this.locations = new ImageLocationTable(image);
  }

  lookup(a: IpAddress): number {
    if (a.family === 4) return this.table.lookup4(a.w0);
    const s = this.scratch;
    s[0] = a.w0;
    s[1] = a.w1;
    s[2] = a.w2;
    s[3] = a.w3;
    return this.table.lookup6();
  }

  location(id: number): Location {
    this.releaseState.check('location database');
    return this.locations.get(id);
  }

  tilings(): LocationTilings {
    this.releaseState.check('location database');
    const image = this.image;
    return {
      v4: image.v4,
      v6: image.v6,
      locationCount: image.locationCount,
      decode: (id) => {
        this.releaseState.check('location database');
        return id === 0 ? UNKNOWN_LOCATION : decodeLocation(image, id);
      },
    };
  }

  /**
   * Ends the addon's table (its lookups throw from now on), frees the image when the database owns
   * its buffer (detached: every view of it gets length 0), then the tables derived from it
   * (answer classes) free theirs.
   */
  release(): void {
    runSteps(this.releaseSteps());
  }

  /** {@link release} in steps: the table ends at the first; the image, then each derived table, one step each. */
  *releaseSteps(): Generator<void, void, void> {
    if (this.releaseState.released) return;
    this.table.release();
    const listeners = this.releaseState.markReleased();
    yield;
    if (this.image.ownsBuffer) this.addon.releaseBuffer(this.image.buffer);
    for (const l of listeners) {
      yield;
      l();
    }
  }

  onRelease(listener: () => void): void {
    this.releaseState.onRelease(listener);
  }

  lookupBatch(family: 4 | 6, addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): void {
    if (family === 4) this.table.lookup4Batch(addresses, ids, prefixes);
    else this.table.lookup6Batch(addresses, ids, prefixes);
  }

  describe(): LocationDbSummary {
    return {
      implementation: this.implementation,
      sources: [...this.image.metadata.sources],
      locations: this.image.locationCount,
      ipv4Ranges: this.image.v4.ids.length,
      ipv6Ranges: this.image.v6.ids.length,
    };
  }
}
