import type { IpAddress } from '../../core/net/ipAddress.js';
import { formatQualifiers, type Location } from '../../core/location/location.js';
import type { LocationDb, LocationTilings } from '../../core/location/locationDb.js';
import { BucketRangeTable4 } from '../../core/lpm/bucketRangeTable.js';
import { hugePageBuffer, rangesInHugePages, releaseHugePages } from '../../core/lpm/hugePages.js';
import { LocationDbReleasedError } from '../../core/location/locationDbRelease.js';
import { narrowIds, RangeTable4, RangeTable6, unpackPrefix, type ClassRanges, type ClassRangeSource, type RangeIds } from '../../core/lpm/rangeTable.js';
import type { Tiling } from '../../core/lpm/tiling.js';
import type { CompiledDataCenter } from '../../core/model/topology.js';
import { locationDecisionKey } from './locationDecision.js';
import { decodeClassesSteps, encodeClasses, storedClassesKey, type StoredClasses } from './answerClassesStore.js';
import { runSteps, type Steps } from './steps.js';
import { LOCATION_READ, narrowScope, STAGE_SLOTS, type LocationReader, type SelectionState } from './stage.js';

/**
 * Answer classes of one record, precomputed at load (as gdnsd merges its maps per resource): every
 * location of the location table is reduced to the decision this record makes from it — the
 * steps its location readers can still decide by (`locationDecision.ts`): rules with their
 * location tests folded to their truths and the rank groups they give, down to a static-proximity
 * ranking or a default group — and neighbouring ranges whose decisions are equal are merged.
 * Locations that read differently but decide alike (two countries bound to the same view, a
 * ranking no health state can reach) share a class. A lookup in these tables gives the class and
 * the largest aligned block around the client with that class, so neighbouring locations that
 * get the same answer share one wider ECS scope (docs/PRODUCT.md §8 goal).
 *
 * A class keeps what each reader keeps of its first location (its representative): the stages
 * evaluate that, which decides exactly as every other member's would, for every health state,
 * client subnet and query name.
 */
export interface LocationClass {
  /** Per location reader, in registration order: what it keeps of the class's representative. */
  readonly data: readonly unknown[];
  /** The representative location in dotted form (shown by /explain). */
  readonly representative: string;
}

/** The class tables of one record over one location database. */
export class LocationClasses implements ClassRangeSource {
  private lastState: SelectionState | undefined;
  private lastPacked = 0;
  private released = false;

  constructor(
    /** The database the classes were derived from; any other database makes them unusable. */
    readonly geo: LocationDb,
    /** IPv4 classes: the bucket layout for cold caches, or sorted starts beyond 65,536 classes. */
    readonly v4: BucketRangeTable4 | RangeTable4<RangeIds>,
    readonly v6: RangeTable6<RangeIds>,
    readonly classes: readonly LocationClass[],
  ) {}

  /**
   * Packed `classId * 256 + prefixLength` for an address (IPv4 table for IPv4 and mapped addresses).
   * @throws LocationDbReleasedError after {@link release}.
   */
  lookup(a: IpAddress): number {
    if (this.released) throw new LocationDbReleasedError('answer-class table');
    return a.family === 4 ? this.v4.lookup(a.w0) : this.v6.lookup(a.w0, a.w1, a.w2, a.w3);
  }

  /** {@inheritDoc ClassRangeSource.classRanges} */
  classRanges(): ClassRanges | undefined {
    if (this.released) return undefined;
    const v4 = this.v4 instanceof BucketRangeTable4 ? this.v4.ranges() : { starts: this.v4.starts, ids: Uint32Array.from(this.v4.ids) };
    if (v4 === undefined) return undefined;
    return { v4starts: v4.starts, v4ids: v4.ids, v6starts: this.v6.starts, v6ids: Uint32Array.from(this.v6.ids) };
  }

  /**
   * Unmaps the tables' huge pages now (their database was released: a reload replaced it), rather
   * than when V8 collects them, which an idle engine never does; later lookups throw.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.v4 instanceof BucketRangeTable4) releaseHugePages(this.v4.buffer);
    releaseHugePages(this.v6.starts.buffer);
  }

  /** The client's class for one selection, looked up once; narrows the ECS scope to its block. */
  classOf(s: SelectionState): LocationClass {
    if (this.lastState !== s) {
      this.lastState = s;
      this.lastPacked = this.lookup(s.client.address);
      const prefix = unpackPrefix(this.lastPacked);
      narrowScope(s, prefix);
      s.clientReads |= LOCATION_READ;
      if (s.trace) {
        s.trace.step('scope', {
          input: `answer class of the client's location (locations merged by identical decision for this record: ${this.classes.length} classes, ${this.v4.size + this.v6.size} ranges)`,
          representative: this.classes[Math.floor(this.lastPacked / 256)]!.representative,
          prefix,
          scopeSoFar: s.scope,
        });
      }
    }
    return this.classes[Math.floor(this.lastPacked / 256)]!;
  }
}

/** The client's answer class for this selection, or undefined when the record has no usable tables. */
export function recordClass(s: SelectionState): LocationClass | undefined {
  const lc = s.record.locationClasses;
  return lc && lc.geo === s.env.geo ? lc.classOf(s) : undefined;
}

/**
 * What location reader `index` keeps for the client's answer class; undefined when the record has
 * no usable tables (the stage then reads the location itself, `clientLocation.ts`). Reading it
 * narrows the ECS scope to the class block and records the read for the decision cache.
 */
export function classData<T>(s: SelectionState, index: number): T | undefined {
  return recordClass(s)?.data[index] as T | undefined;
}

/** Class tables by database, then by what the record reads: records with equal reads share them. */
const cache = new WeakMap<LocationDb, Map<string, LocationClasses>>();
/** Distinct reads kept per database; beyond it the cache starts afresh (old snapshots keep theirs). */
const CACHE_LIMIT = 256;

/**
 * The answer-class tables of a record whose stages registered `readers`, or undefined when none
 * did or the database cannot be enumerated (no `tilings()`: the stages then use the location
 * itself, with the location block as scope).
 * Cost: one pass over the location table and one over the ranges (a few ms per 100k ranges),
 * shared by every record with the same readers and candidates.
 */
export function locationClassesFor(
  geo: LocationDb,
  readers: readonly LocationReader[],
  candidates: readonly CompiledDataCenter[],
): LocationClasses | undefined {
  return runSteps(locationClassesSteps(geo, readers, candidates));
}

/**
 * Locations handled between two yields of {@link locationClassesSteps}: each is decoded and read
 * by every reader (microseconds), so 256 keep a step near a millisecond; 2048 made steps of 10–57 ms
 * on a loaded machine.
 */
const CLASS_STEP = 256;
/** Ranges remapped between two yields (a few nanoseconds each). */
const REMAP_STEP = 16384;

/**
 * {@link locationClassesFor} as steps (`steps.ts`): a table built for the first time over a large
 * location database (a second or more for the full city data) is built in slices.
 */
export function* locationClassesSteps(
  geo: LocationDb,
  readers: readonly LocationReader[],
  candidates: readonly CompiledDataCenter[],
): Steps<LocationClasses | undefined> {
  if (!geo.tilings || readers.length === 0) return undefined;
  const key = JSON.stringify([readers.map((r) => [r.slot, r.id]), candidates.map((c) => c.index)]);
  let byReads = cache.get(geo);
  if (!byReads || byReads.size >= CACHE_LIMIT) cache.set(geo, (byReads = new Map()));
  let lc = byReads.get(key);
  if (!lc) {
    lc = yield* stored(geo, geo.tilings(), readers, candidates);
    // The database may have been released while the tables were built in slices (a what-if
    // compilation over a snapshot a reload retired): the tables would read freed ranges.
    geo.tilings();
    // Released with their database (`LocationDb.release`), not left to the collector.
    const built = lc;
    geo.onRelease?.(() => built.release());
    // The cache may have been started afresh by another build meanwhile: store in the current map.
    cache.get(geo)!.set(key, lc);
  }
  return lc;
}

/**
 * The tables from the database's store of derived tables when it holds them for these readers and
 * candidates (`answerClassesStore.ts`), else built and stored there.
 */
function* stored(
  geo: LocationDb,
  tilings: LocationTilings,
  readers: readonly LocationReader[],
  candidates: readonly CompiledDataCenter[],
): Steps<LocationClasses> {
  const store = geo.derivedTables;
  if (!store) return yield* tables(geo, yield* build(tilings, readers, candidates));
  const key = storedClassesKey(readers, candidates);
  const bytes = store.read(key);
  const found = bytes && (yield* decodeClassesSteps(bytes, tilings.locationCount));
  if (found) {
    const classes = [...found.representatives].map((id) => {
      const location = tilings.decode(id);
      const known = !isUnknownLocation(id, location);
      return { data: readers.map((r) => r.classData(location, known)), representative: formatQualifiers(location.qualifiers) };
    });
    return yield* tables(geo, { ...found, classes });
  }
  const built = yield* build(tilings, readers, candidates);
  void store.write(key, encodeClasses(built));
  yield;
  return yield* tables(geo, built);
}

/** The tables of {@link build} before their lookup structures. */
interface BuiltClasses extends StoredClasses {
  readonly classes: readonly LocationClass[];
}

/**
 * The lookup tables over built or stored classes and ranges, in steps: the IPv4 bucket layout is
 * tens to hundreds of milliseconds over the city data, too long for one turn of a reload.
 */
function* tables(geo: LocationDb, b: BuiltClasses): Steps<LocationClasses> {
  // Class ids are few (hundreds): one byte per range keeps the tables small in the caches, and
  // IPv4 ids fit beside their starts in the bucket layout. Both families live in huge pages when
  // large: every query reads these tables with cold caches (fewer lines, fewer TLB misses).
  const v4ids = narrowIds(b.v4.ids, b.classes.length);
  yield;
  const v4 = b.classes.length <= 0x10000 ? yield* BucketRangeTable4.inSteps(b.v4.starts, v4ids, hugePageBuffer) : new RangeTable4(b.v4.starts, v4ids);
  yield;
  const v6ranges = rangesInHugePages(b.v6.starts, narrowIds(b.v6.ids, b.classes.length));
  yield;
  return new LocationClasses(geo, v4, new RangeTable6(v6ranges.starts, v6ranges.ids), b.classes);
}

function* build(tilings: LocationTilings, readers: readonly LocationReader[], candidates: readonly CompiledDataCenter[]): Steps<BuiltClasses> {
  const classes: LocationClass[] = [];
  const representatives: number[] = [];
  const classByKey = new Map<string, number>();
  /** Class of each distinct read (what every reader reads): decisions are computed once per read. */
  const classByRead = new Map<string, number>();
  const inPipelineOrder = readers.map((_, i) => i).sort((a, b) => STAGE_SLOTS.indexOf(readers[a]!.slot) - STAGE_SLOTS.indexOf(readers[b]!.slot));
  const n = tilings.locationCount;
  const classOfLocation = new Uint32Array(n);
  for (let id = 0; id < n; id++) {
    const location = tilings.decode(id);
    const known = !isUnknownLocation(id, location);
    let read = '';
    for (const r of readers) read += `${r.read(location, known)}\u001f`;
    let c = classByRead.get(read);
    if (c === undefined) {
      const data = readers.map((r) => r.classData(location, known));
      const key = locationDecisionKey(
        candidates,
        inPipelineOrder.map((i) => readers[i]!.steps(data[i])),
      );
      c = classByKey.get(key);
      if (c === undefined) {
        c = classes.length;
        classes.push({ data, representative: formatQualifiers(location.qualifiers) });
        representatives.push(id);
        classByKey.set(key, c);
      }
      classByRead.set(read, c);
    }
    classOfLocation[id] = c;
    if (id % CLASS_STEP === CLASS_STEP - 1) yield;
  }
  const v4 = yield* remap(tilings.v4, classOfLocation, 1);
  const v6 = yield* remap(tilings.v6, classOfLocation, 4);
  return { classes, representatives: Uint32Array.from(representatives), v4, v6 };
}

/**
 * A location the data says nothing about: id 0, or an entry with no qualifier and no
 * coordinates. Static proximity treats both alike (its rule 5).
 */
export function isUnknownLocation(id: number, l: Location): boolean {
  return id === 0 || (l.lat === undefined && l.qualifiers.every((q) => q === ''));
}

/**
 * A tiling with each location id replaced by its class, adjacent ranges of the same class merged.
 * `stride` is the words per range start (1 for IPv4, 4 for IPv6).
 */
function* remap(t: Tiling, classOf: Uint32Array, stride: 1 | 4): Steps<{ starts: Uint32Array; ids: Uint32Array }> {
  const starts = new Uint32Array(t.starts.length);
  const ids = new Uint32Array(t.ids.length);
  let m = 0;
  for (let i = 0; i < t.ids.length; i++) {
    if (i % REMAP_STEP === REMAP_STEP - 1) yield;
    const c = classOf[t.ids[i]!]!;
    if (m > 0 && ids[m - 1] === c) continue;
    for (let w = 0; w < stride; w++) starts[m * stride + w] = t.starts[i * stride + w]!;
    ids[m++] = c;
  }
  return { starts: starts.slice(0, m * stride), ids: ids.slice(0, m) };
}
