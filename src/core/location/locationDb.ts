import type { IpAddress } from '../net/ipAddress.js';
import type { Location } from './location.js';
import { LocationTable, type LocationLookupTable } from '../../capabilities/geo/locationTable.js';
import { RangeBuilder4, RangeBuilder6, type RangeTable4, type RangeTable6 } from '../lpm/rangeTable.js';
import type { Tiling } from '../lpm/tiling.js';

/**
 * The location database the engine asks on every query: client address → location id and the
 * prefix length of the largest aligned block around the address with the same location.
 *
 * Implementations: {@link RangeLocationDb} (TypeScript, sorted ranges + binary search; the
 * reference) and the native addon (issue "native LPM"), which must return identical results.
 */
export interface LocationDb {
  /**
   * Packed `locationId * 256 + prefixLength` for an address (split with `unpackId` /
   * `unpackPrefix`). IPv4 addresses (including folded IPv4-mapped ones) are looked up in the IPv4
   * data only, IPv6 addresses in the IPv6 data only; prefix lengths are in bits of that family.
   */
  lookup(address: IpAddress): number;
  /** The location of an id returned by {@link lookup}; id 0 is the unknown location. */
  location(id: number): Location;
  /**
   * Looks up many addresses of one family at once (log enrichment, tests, benchmarks; both
   * implementations here have it, test doubles need not): IPv4 addresses are one word each,
   * IPv6 four words (most significant first). Writes the location id and the prefix length of
   * address i to `ids[i]` and `prefixes[i]`.
   * @throws RangeError when `ids` or `prefixes` are shorter than the number of addresses.
   */
  lookupBatch?(family: 4 | 6, addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): void;
  /**
   * The merged ranges behind the database, for tables derived from it at load (a record's
   * answer classes, SPEC §8). Both implementations here have it; test doubles need not.
   */
  tilings?(): LocationTilings;
  /** Which implementation answers: the TypeScript reference or the native addon. */
  readonly implementation: 'typescript' | 'native';
  /** Human-readable summary (sources, range and location counts) for /status and logs. */
  describe(): LocationDbSummary;
}

/**
 * The ranges of a location database: each family's tiling (range starts — one word per IPv4
 * range, four per IPv6 range — and location ids; neighbours with equal ids merged) and a decoder
 * of location ids that does not fill the database's own cache.
 */
export interface LocationTilings {
  readonly v4: Tiling;
  readonly v6: Tiling;
  /** Number of location ids, including 0 (unknown). */
  readonly locationCount: number;
  decode(id: number): Location;
}

/** Counts shown by /status. */
export interface LocationDbSummary {
  implementation: 'typescript' | 'native';
  sources: string[];
  locations: number;
  ipv4Ranges: number;
  ipv6Ranges: number;
}

/** TypeScript location database over merged range tables. */
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

/** A database that knows no address: every lookup is the unknown location over the whole space. */
export function emptyLocationDb(): RangeLocationDb {
  return new RangeLocationDb(new LocationTable(), new RangeBuilder4().build(), new RangeBuilder6().build(), []);
}
