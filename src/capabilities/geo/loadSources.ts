import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FILE_SIZE_LIMITS, readRegularFile, readRegularFileAsync } from '../../core/config/regularFile.js';
import type { GeoConfig, GeoSourceConfig } from './geoSchema.js';
import { applyCustomEntries, buildLocationImage } from './buildImage.js';
import { compiledFileIdentity, loadOrBuildCompiled, type CompiledCacheOutcome } from './compiledCache.js';
import { derivedTableFiles } from './derivedTableFiles.js';
import { readImage } from './compiledImage.js';
import type { SkippedLines } from './delimitedFile.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import type { LocationFormat } from './locationFormat.js';
import { LOCATION_FORMATS } from './locationFormats.js';
import { openLocationDb, type OpenedLocationDb } from './openLocationDb.js';

const require = createRequire(import.meta.url);

/** Compiled image bytes for a `geo` section, and what a lenient build skipped. */
export interface LoadedImage {
  readonly bytes: Uint8Array;
  readonly skipped: SkippedLines;
  /** When `geo.compiled` is the cache of `geo.sources`: whether it was fresh or rebuilt (`compiledCache.ts`). */
  readonly cache?: CompiledCacheOutcome;
  /** When the bytes are a compiled file's as read (fresh, not rebuilt): the file and the identity of what was loaded, keying the tables derived from it (`derivedTableFiles.ts`). */
  readonly derived?: { readonly file: string; readonly identity: string };
}

/** An opened location database and what its lenient load skipped. */
export interface ConfiguredLocationDb extends OpenedLocationDb {
  readonly skipped: SkippedLines;
  readonly cache?: CompiledCacheOutcome;
}

/**
 * The engine's location database for a `geo` section, loaded on the calling thread (start-up):
 * the native addon when it loads (unless `geo.implementation` says otherwise), else the
 * TypeScript reference with `fallbackReason` set. `formats` are those the sources are of.
 * @throws Error as {@link loadLocationImage}, or when `geo.implementation: native` cannot be met.
 */
export function loadConfiguredLocationDb(geo: GeoConfig, configFile: string, formats: readonly LocationFormat[] = LOCATION_FORMATS): ConfiguredLocationDb {
  const { bytes, skipped, cache, derived } = loadLocationImage(geo, configFile, formats);
  return withDerivedTables({ ...openLocationDb(readImage(bytes), geo.implementation), skipped, ...(cache ? { cache } : {}) }, derived);
}

/**
 * The location database for a list of sources with the default settings (strict, no custom
 * entries, native when the addon loads): a shorthand for tests and tools.
 * @throws Error as {@link loadConfiguredLocationDb}.
 */
export function loadLocationDb(sources: readonly GeoSourceConfig[], configFile: string, formats: readonly LocationFormat[] = LOCATION_FORMATS): LocationDb {
  return loadConfiguredLocationDb({ sources: [...sources], custom: [], mode: 'strict', implementation: 'auto' }, configFile, formats).db;
}

/**
 * {@link loadConfiguredLocationDb} for reloads: the reading and building happen off the event loop (see
 * {@link loadLocationImageOffThread}, which reads the formats of {@link LOCATION_FORMATS}); only
 * opening the finished image (milliseconds) runs here.
 */
export async function reloadLocationDb(geo: GeoConfig, configFile: string): Promise<ConfiguredLocationDb> {
  const { bytes, skipped, cache, derived } = await loadLocationImageOffThread(geo, configFile);
  return withDerivedTables({ ...openLocationDb(readImage(bytes), geo.implementation), skipped, ...(cache ? { cache } : {}) }, derived);
}

/**
 * Gives a database loaded from a compiled file (`derived`) a store for the tables derived from it
 * (`<compiled>.derived/`, `derivedTableFiles.ts`); one built from the sources gets none (its next
 * start loads the file it wrote, and stores them then).
 */
function withDerivedTables(loaded: ConfiguredLocationDb, derived: LoadedImage['derived']): ConfiguredLocationDb {
  if (derived) loaded.db.derivedTables = derivedTableFiles(`${derived.file}.derived`, derived.identity);
  return loaded;
}

/** The identity of a compiled file read alone, its custom entries included (they change the bytes served). */
function compiledAloneIdentity(file: string, geo: GeoConfig): string {
  return `${compiledFileIdentity(file)}\0${JSON.stringify(geo.custom)}`;
}

/**
 * Produces the compiled image for a `geo` section on the calling thread: with both `geo.compiled`
 * and `geo.sources`, the compiled file when it is up to date with the sources, else built from
 * them and written (`compiledCache.ts`); with `geo.compiled` alone, reads it (then applies
 * `geo.custom`); with `geo.sources` alone, builds from them (of `formats`) and `geo.custom`.
 * @throws Error naming the file or source and, for bad lines in strict mode, `file:line`.
 */
export function loadLocationImage(geo: GeoConfig, configFile: string, formats: readonly LocationFormat[] = LOCATION_FORMATS): LoadedImage {
  const noneSkipped = { count: 0, first: [] };
  if (geo.compiled !== undefined && geo.sources.length > 0) {
    const file = compiledPath(geo.compiled, configFile);
    const loaded = loadOrBuildCompiled(geo, file, (s) => sourcePath(s, configFile), formats);
    return loaded.cache.identity === undefined ? loaded : { ...loaded, derived: { file, identity: loaded.cache.identity } };
  }
  if (geo.compiled !== undefined) {
    const file = compiledPath(geo.compiled, configFile);
    const identity = compiledAloneIdentity(file, geo);
    const bytes = readCompiled(file, readRegularFile(file, FILE_SIZE_LIMITS.location));
    return { bytes: geo.custom.length > 0 ? applyCustomEntries(readImage(bytes), geo.custom) : bytes, skipped: noneSkipped, derived: { file, identity } };
  }
  const built = buildLocationImage({ sources: geo.sources, custom: geo.custom, mode: geo.mode, resolvePath: (s) => sourcePath(s, configFile), formats });
  return { bytes: built.image, skipped: built.skipped };
}

/**
 * {@link loadLocationImage} on a worker thread, so a reload that parses a 50 MB database (seconds)
 * never stalls queries; the image comes back as a transferred buffer (no copy). A compiled file
 * without custom entries or sources is read asynchronously on this thread instead (no parsing to
 * offload); the cache of sources is checked, and rebuilt when stale, on the worker.
 * The worker reads the formats of {@link LOCATION_FORMATS}: functions cannot be sent to a thread.
 * @throws Error as {@link loadLocationImage}.
 */
export async function loadLocationImageOffThread(geo: GeoConfig, configFile: string): Promise<LoadedImage> {
  if (geo.compiled !== undefined && geo.sources.length === 0 && geo.custom.length === 0) {
    const file = compiledPath(geo.compiled, configFile);
    const identity = compiledAloneIdentity(file, geo);
    return {
      bytes: readCompiled(file, await readRegularFileAsync(file, FILE_SIZE_LIMITS.location)),
      skipped: { count: 0, first: [] },
      derived: { file, identity },
    };
  }
  return new Promise<LoadedImage>((done, fail) => {
    const worker = imageWorker({ geo, configFile });
    worker.once('message', (m: { ok: true; image: LoadedImage } | { ok: false; error: string }) => {
      if (m.ok) done(m.image);
      else fail(new Error(m.error));
    });
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`location build worker exited with code ${code}`)));
  });
}

/**
 * Starts `imageWorker`. Under tsx (tests, development) the worker registers tsx first: workers do
 * not inherit `--import` hooks on Node 20.
 */
function imageWorker(workerData: unknown): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./imageWorker.js', import.meta.url), { workerData });
  const script = JSON.stringify(new URL('./imageWorker.ts', import.meta.url).href);
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${script}); });`, { eval: true, workerData });
}

/** Checks a compiled file's header (the contents are checked when the image is opened). */
function readCompiled(file: string, bytes: Uint8Array): Uint8Array {
  try {
    readImage(bytes);
  } catch (e) {
    throw new Error(`compiled location file ${file}: ${(e as Error).message}`, { cause: e });
  }
  return bytes;
}

/** Absolute path of `geo.compiled`: relative paths are relative to the configuration file. */
export function compiledPath(path: string, configFile: string): string {
  return resolve(dirname(configFile), path);
}

/** Absolute path of a source: relative paths are relative to the configuration file. */
export function sourcePath(src: GeoSourceConfig, configFile: string): string {
  if (src.package !== undefined) {
    try {
      return require.resolve(src.package);
    } catch {
      throw new Error(`location source package file "${src.package}" is not installed (npm install)`);
    }
  }
  return resolve(dirname(configFile), src.path!);
}
