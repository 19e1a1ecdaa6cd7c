import type { IpAddress } from '../../core/net/ipAddress.js';
import type { Location } from '../../core/location/location.js';
import type { LocationDb, LocationDbSummary, LocationTilings } from '../../core/location/locationDb.js';
import type { RangeTable4, RangeTable6 } from '../../core/lpm/rangeTable.js';
import type { LocationLookupTable } from './locationTable.js';
import { ReleaseState } from '../../core/location/locationDbRelease.js';
import { runSteps } from '../../pipeline/selection/steps.js';

/**
 * The TypeScript location database over merged range tables (`core/lpm/rangeTable.ts`): the
 * reference implementation, used when the native addon does not load and by the differential
 * tests, which check that `NativeLocationDb` gives identical results.
 */
export class RangeLocationDb implements LocationDb {
  readonly implementation = 'typescript' as const;
  private readonly releaseState = new ReleaseState();

  /**
   * @param free Frees the memory the tables are views of, at {@link release} (the image buffer,
   *   when the addon is there to detach it: `openLocationDb.ts`); by default the collector does.
   */
  constructor(
    readonly table: LocationLookupTable,
    readonly v4: RangeTable4,
    readonly v6: RangeTable6,
    readonly sources: readonly string[],
    private readonly free: () => void = () => undefined,
  ) {}

  lookup(a: IpAddress): number {
    // One boolean per lookup: the tables may be views of a freed buffer, which read as undefined.
    this.releaseState.check('location database');
    return a.family === 4 ? this.v4.lookup(a.w0) : this.v6.lookup(a.w0, a.w1, a.w2, a.w3);
  }

  location(id: number): Location {
    this.releaseState.check('location database');
    return this.table.get(id);
  }

  tilings(): LocationTilings {
    this.releaseState.check('location database');
    return { v4: this.v4, v6: this.v6, locationCount: this.table.size, decode: (id) => this.table.get(id) };
  }

  lookupBatch(family: 4 | 6, addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): void {
    const count = family === 4 ? addresses.length : addresses.length >>> 2;
    if (ids.length < count || prefixes.length < count) throw new RangeError('ids and prefixes must hold one entry per address');
    this.releaseState.check('location database');
    for (let i = 0; i < count; i++) {
      const packed =
        family === 4 ? this.v4.lookup(addresses[i]!) : this.v6.lookup(addresses[4 * i]!, addresses[4 * i + 1]!, addresses[4 * i + 2]!, addresses[4 * i + 3]!);
      ids[i] = Math.floor(packed / 256);
      prefixes[i] = packed & 255;
    }
  }

  /** Marks the database released (later lookups throw), frees its memory, then calls the release listeners. */
  release(): void {
    runSteps(this.releaseSteps());
  }

  /** {@link release} in steps: refused from the first; each listener, then the memory, one step each. */
  *releaseSteps(): Generator<void, void, void> {
    if (this.releaseState.released) return;
    for (const l of this.releaseState.markReleased()) {
      l();
      yield;
    }
    this.free();
  }

  onRelease(listener: () => void): void {
    this.releaseState.onRelease(listener);
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
