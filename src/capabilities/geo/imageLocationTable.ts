import { decodeLocation, type LocationImage } from './compiledImage.js';
import { UNKNOWN_LOCATION, type Location } from '../../core/location/location.js';

/**
 * The locations of a compiled image, decoded on first use and cached: start-up does not pay for
 * half a million objects, and the query path allocates only the first time it meets a location.
 */
export class ImageLocationTable {
  private readonly cache: (Location | undefined)[];

  constructor(private readonly image: Pick<LocationImage, 'records' | 'pool' | 'locationCount'>) {
    this.cache = new Array<Location | undefined>(image.locationCount);
    this.cache[0] = UNKNOWN_LOCATION;
  }

  /** The location of an id; ids outside the table give {@link UNKNOWN_LOCATION}. */
  get(id: number): Location {
    if (!(id >= 0 && id < this.cache.length)) return UNKNOWN_LOCATION;
    let l = this.cache[id];
    if (l === undefined) {
      l = decodeLocation(this.image, id);
      this.cache[id] = l;
    }
    return l;
  }

  /** Number of locations, including the unknown location. */
  get size(): number {
    return this.cache.length;
  }
}
