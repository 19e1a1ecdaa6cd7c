import { readFileSync, statSync } from 'node:fs';
import { writeAtomically } from '../../core/config/atomicWrite.js';
import type { GeoConfig } from './geoSchema.js';
import { IMAGE_VERSION, readImage } from './compiledImage.js';
import { buildLocationImage } from './buildImage.js';
import type { SkippedLines } from './delimitedFile.js';
import type { LocationFormat } from './locationFormat.js';

/**
 * The compiled location file as a cache of the `geo` sources (`geo.compiled` together with
 * `geo.sources`; src/capabilities/geo/README.md, "Compiled file and CLI"). The file records a
 * **stamp** of what it was built from: each source file's resolved path, size, modification and
 * status-change times and inode, the custom entries, the load mode and the image format version.
 * A start (or `gslbd geo build -c`) compares it with the stamp of the sources as they are now:
 * equal, the file is loaded (no parsing, well under a second for city data); different, missing or
 * unreadable, the sources are built again and the file rewritten — never served stale.
 *
 * Why the status-change time: npm installs package files with a fixed modification time
 * (1985-10-26), so a new GeoLite2 release of the same size would keep size and mtime; every write
 * or replacement of a file sets its ctime and inode, which no tool can set back.
 */

/** What a cached load found and did. */
export interface CompiledCacheOutcome {
  /** The compiled file (absolute). */
  readonly file: string;
  /** `fresh`: loaded as it was; `rebuilt`: built from the sources (and written, unless `writeError`). */
  readonly state: 'fresh' | 'rebuilt';
  /** Why it was rebuilt: `missing`, `sources changed`, `built without a stamp`, or the reason it could not be read. */
  readonly reason?: string;
  /** The write failed (read-only directory, disk full): the engine runs on the built data, the next start builds again. */
  readonly writeError?: string;
  /** `fresh` only: the identity of the bytes loaded ({@link compiledFileIdentity}), the key of tables derived from them. */
  readonly identity?: string;
}

/** A compiled image obtained through the cache. */
export interface CachedImage {
  readonly bytes: Uint8Array;
  readonly skipped: SkippedLines;
  readonly cache: CompiledCacheOutcome;
}

/**
 * The stamp of a `geo` section's sources as they are now (see above).
 * @throws Error naming a source whose file cannot be resolved or read.
 */
export function sourcesStamp(geo: Pick<GeoConfig, 'sources' | 'custom' | 'mode'>, resolveSource: (s: GeoConfig['sources'][number]) => string): string {
  const sources = geo.sources.map((s) => {
    const file = resolveSource(s);
    let st;
    try {
      st = statSync(file, { bigint: true });
    } catch (e) {
      throw new Error(`location source ${s.package ?? file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
    }
    return { ...s, file, size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs), ino: String(st.ino) };
  });
  return JSON.stringify({ version: IMAGE_VERSION, mode: geo.mode, custom: geo.custom, sources });
}

/**
 * Loads the compiled file when its stamp matches the sources, else builds the image from the
 * sources and writes the file (atomically: a temporary file in the same directory, then rename;
 * the directory is created when missing). `force` builds whatever the stamp says.
 * @throws Error as `buildLocationImage` (a bad source line in strict mode, an unreadable source).
 */
export function loadOrBuildCompiled(
  geo: Pick<GeoConfig, 'sources' | 'custom' | 'mode'>,
  file: string,
  resolveSource: (s: GeoConfig['sources'][number]) => string,
  formats: readonly LocationFormat[],
  force = false,
): CachedImage {
  const stamp = sourcesStamp(geo, resolveSource);
  let reason = 'forced';
  if (!force) {
    const found = readStamped(file);
    if ('bytes' in found && found.stamp === stamp)
      return { bytes: found.bytes, skipped: { count: 0, first: [] }, cache: { file, state: 'fresh', identity: found.identity } };
    reason = 'bytes' in found ? (found.stamp === undefined ? 'built without a stamp' : 'sources changed') : found.problem;
  }
  const built = buildLocationImage({ sources: geo.sources, custom: geo.custom, mode: geo.mode, resolvePath: resolveSource, formats, stamp });
  let writeError: string | undefined;
  try {
    writeAtomically(file, built.image);
  } catch (e) {
    writeError = (e as Error).message;
  }
  return { bytes: built.image, skipped: built.skipped, cache: { file, state: 'rebuilt', reason, ...(writeError ? { writeError } : {}) } };
}

/**
 * The identity of a compiled location file's bytes as read: its device, inode, size, modification
 * and status-change times, taken **before** the read. Every rebuild writes a new file and renames
 * it over the old one (`writeAtomically`): a new inode and ctime, so the identity changes; a file
 * replaced between the stat and the read only leaves tables keyed by an identity no later load has.
 * @throws Error when the file cannot be stat'ed.
 */
export function compiledFileIdentity(file: string): string {
  const st = statSync(file, { bigint: true });
  return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':');
}

/** The compiled file's bytes, stamp and identity, or why it cannot be used. */
function readStamped(file: string): { bytes: Uint8Array; stamp: string | undefined; identity: string } | { problem: string } {
  let bytes: Uint8Array;
  let identity: string;
  try {
    identity = compiledFileIdentity(file);
    bytes = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' ? 'missing' : `unreadable (${code ?? (e as Error).message})` };
  }
  try {
    return { bytes, stamp: readImage(bytes).metadata.stamp, identity };
  } catch (e) {
    return { problem: `not a usable compiled file (${(e as Error).message})` };
  }
}
