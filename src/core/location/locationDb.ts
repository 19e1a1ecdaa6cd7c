import type { IpAddress } from '../net/ipAddress.js';
import { UNKNOWN_LOCATION, type Location } from './location.js';
import { RangeBuilder4, RangeBuilder6 } from '../lpm/rangeTable.js';
import type { Tiling } from '../lpm/tiling.js';

/**
 * The location database the engine asks on every query: client address → location id and the
 * prefix length of the largest aligned block around the address with the same location.
 *
 * Implementations (src/capabilities/geo/): `RangeLocationDb` (TypeScript, sorted ranges + binary
 * search; the reference) and `NativeLocationDb` (the native addon), which must return identical
 * results; and {@link emptyLocationDb} here.
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
   * Looks up many addresses of one family at once (log enrichment, tests, benchmarks; the geo
   * capability's implementations have it, test doubles need not): IPv4 addresses are one word
   * each, IPv6 four words (most significant first). Writes the location id and the prefix length of
   * address i to `ids[i]` and `prefixes[i]`.
   * @throws RangeError when `ids` or `prefixes` are shorter than the number of addresses.
   */
  lookupBatch?(family: 4 | 6, addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): void;
  /**
   * The merged ranges behind the database, for tables derived from it at load (a record's
   * answer classes, docs/PRODUCT.md §8). The geo capability's implementations have it; test doubles need
   * not.
   */
  tilings?(): LocationTilings;
  /**
   * Where tables derived from this database at load are kept between starts (a record's answer
   * classes, `src/pipeline/selection/answerClassesStore.ts`): set by the geo capability for a
   * database loaded unchanged from its compiled file; absent otherwise (tables are then built at
   * every load).
   */
  derivedTables?: DerivedTableStore;
  /** Which implementation answers: the TypeScript reference or the native addon. */
  readonly implementation: 'typescript' | 'native';
  /** Human-readable summary (sources, range and location counts) for /status and logs. */
  describe(): LocationDbSummary;
  /**
   * Frees the database's tables now instead of at garbage collection (a reload replaced it; V8
   * starts no collection on an idle engine: src/capabilities/geo/README.md "Reload"), then calls
   * the {@link onRelease} listeners. Afterwards `lookup`, `location`, `lookupBatch` and `tilings`
   * throw `LocationDbReleasedError` (`locationDbRelease.ts`). Idempotent. The geo capability's
   * implementations have it; test doubles need not.
   */
  release?(): void;
  /**
   * {@link release} as steps: the database refuses use from the first step on; its memory and each
   * derived table's (an {@link onRelease} listener) are freed in later steps, so the geo capability
   * spreads the release of a replaced database over turns of the event loop (issue 17: 112 ms in
   * one turn). Run to the end, it equals `release()`.
   */
  releaseSteps?(): Generator<void, void, void>;
  /** Calls `listener` when {@link release} runs (at once when it ran already): tables derived from the database free theirs then. */
  onRelease?(listener: () => void): void;
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

/**
 * Bytes kept between starts beside a location database, by key. The store's own identity of the
 * database's bytes is part of every key: entries of another version of the data are never read.
 */
export interface DerivedTableStore {
  /** The bytes stored under `key`, or undefined when there are none or they cannot be read. */
  read(key: string): Uint8Array | undefined;
  /**
   * Stores `bytes` under `key`; best effort (a read-only directory only costs the next start the
   * build). The write may finish after the call returns (off the event loop): the promise settles
   * when it did or failed, and never rejects. `bytes` must not change until then.
   */
  write(key: string, bytes: Uint8Array): void | Promise<void>;
}

/** Counts shown by /status. */
export interface LocationDbSummary {
  implementation: 'typescript' | 'native';
  sources: string[];
  locations: number;
  ipv4Ranges: number;
  ipv6Ranges: number;
}

/**
 * A database that knows no address: every lookup is the unknown location (id 0) over the whole
 * address space (prefix length 0) in both families. For engines and tests without location data.
 */
export function emptyLocationDb(): LocationDb {
  const v4 = new RangeBuilder4().build();
  const v6 = new RangeBuilder6().build();
  return {
    implementation: 'typescript',
    lookup: () => 0,
    location: () => UNKNOWN_LOCATION,
    lookupBatch(family, addresses, ids, prefixes) {
      const count = family === 4 ? addresses.length : addresses.length >>> 2;
      if (ids.length < count || prefixes.length < count) throw new RangeError('ids and prefixes must hold one entry per address');
      ids.fill(0, 0, count);
      prefixes.fill(0, 0, count);
    },
    tilings: () => ({ v4, v6, locationCount: 1, decode: () => UNKNOWN_LOCATION }),
    describe: () => ({ implementation: 'typescript', sources: [], locations: 1, ipv4Ranges: v4.size, ipv6Ranges: v6.size }),
  };
}
