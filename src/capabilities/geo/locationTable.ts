import { UNKNOWN_LOCATION, type Location } from '../../core/location/location.js';

/** Id → location, as the location database needs it (interned table or compiled image). */
export interface LocationLookupTable {
  /** The location of an id; unknown ids give {@link UNKNOWN_LOCATION}. */
  get(id: number): Location;
  /** Number of locations, including the unknown location. */
  readonly size: number;
}

/**
 * Interned locations: each distinct location (qualifiers, coordinates, ASN) gets one small id, so
 * range tables store a 32-bit id per range and equal neighbours can be merged by comparing ids.
 * Id 0 is always {@link UNKNOWN_LOCATION} (addresses the data does not cover).
 */
export class LocationTable implements LocationLookupTable {
  private readonly byKey = new Map<string, number>();
  private readonly list: Location[] = [UNKNOWN_LOCATION];

  constructor() {
    this.byKey.set(keyOf(UNKNOWN_LOCATION), 0);
  }

  /** Id of the location, adding it when new. */
  intern(location: Location): number {
    const key = keyOf(location);
    let id = this.byKey.get(key);
    if (id === undefined) {
      id = this.list.length;
      this.list.push(location);
      this.byKey.set(key, id);
    }
    return id;
  }

  /** The location of an id; unknown ids give {@link UNKNOWN_LOCATION}. */
  get(id: number): Location {
    return this.list[id] ?? UNKNOWN_LOCATION;
  }

  /** Number of interned locations, including the unknown location. */
  get size(): number {
    return this.list.length;
  }
}

function keyOf(l: Location): string {
  return `${l.qualifiers.join('\u0000')}\u0001${l.lat ?? ''}\u0001${l.lon ?? ''}\u0001${l.asn ?? ''}`;
}
