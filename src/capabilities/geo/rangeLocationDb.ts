import type { IpAddress } from '../../core/net/ipAddress.js';
import type { Location } from '../../core/location/location.js';
import type { LocationDb, LocationDbSummary, LocationTilings } from '../../core/location/locationDb.js';
import type { RangeTable4, RangeTable6 } from '../../core/lpm/rangeTable.js';
import type { LocationLookupTable } from './locationTable.js';

/**
 * The TypeScript location database over merged range tables (`core/lpm/rangeTable.ts`): the
 * reference implementation, used when the native addon does not load and by the differential
 * tests, which check that `NativeLocationDb` gives identical results.
 */
export class RangeLocationDb implements LocationDb {
  readonly implementation = 'typescript' as const;

  constructor(
    readonly table: LocationLookupTable,
    readonly v4: RangeTable4,
    readonly v6: RangeTable6,
    readonly sources: readonly string[],
  ) {}

  lookup(a: IpAddress): number {
    return a.family === 4 ? this.v4.lookup(a.w0) : this.v6.lookup(a.w0, a.w1, a.w2, a.w3);
  }

  location(id: number): Location {
    return this.table.get(id);
  }

  tilings(): LocationTilings {
    return { v4: this.v4, v6: this.v6, locationCount: this.table.size, decode: (id) => this.table.get(id) };
  }

  lookupBatch(family: 4 | 6, addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): void {
    const count = family === 4 ? addresses.length : addresses.length >>> 2;
    if (ids.length < count || prefixes.length < count) throw new RangeError('ids and prefixes must hold one entry per address');
    for (let i = 0; i < count; i++) {
      const packed =
        family === 4 ? this.v4.lookup(addresses[i]!) : this.v6.lookup(addresses[4 * i]!, addresses[4 * i + 1]!, addresses[4 * i + 2]!, addresses[4 * i + 3]!);
      ids[i] = Math.floor(packed / 256);
      prefixes[i] = packed & 255;
    }
  }

  describe(): LocationDbSummary {
    return {
      implementation: this.implementation,
      sources: [...this.sources],
      locations: this.table.size,
      ipv4Ranges: this.v4.size,
      ipv6Ranges: this.v6.size,
    };
  }
}
