import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a compiled location image's sections are (byte offsets into the buffer) and how large
 * they are: what `open()` needs to bind a table (native/addon.cc checks each against the buffer).
 * The image format itself is documented in src/capabilities/geo/compiledImage.ts.
 */
export interface NativeLayout {
  readonly locationCount: number;
  readonly v4Count: number;
  readonly v4IndexBits: number;
  readonly v4IndexOffset: number;
  readonly v4StartsOffset: number;
  readonly v4IdsOffset: number;
  readonly v6Count: number;
  readonly v6IndexBits: number;
  readonly v6IndexOffset: number;
  readonly v6StartsOffset: number;
  readonly v6IdsOffset: number;
}

/** The functions `open()` binds to one table (native/addon.cc). */
export interface NativeTable {
  /** Packed `id * 256 + prefix` of an IPv4 address given as an unsigned 32-bit number. */
  lookup4(address: number): number;
  /** Packed result for the IPv6 address in the scratch buffer (four host-order words). */
  lookup6(): number;
  /** Looks up `addresses.length` IPv4 addresses into `ids`/`prefixes`; returns the count. */
  lookup4Batch(addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): number;
  /** Looks up `addresses.length / 4` IPv6 addresses (four words each). */
  lookup6Batch(addresses: Uint32Array, ids: Uint32Array, prefixes: Uint8Array): number;
  /**
   * Ends the table now (idempotent): every later call of the functions above throws an Error with
   * code `ERR_GSLBD_TABLE_RELEASED`, and the table no longer holds the image buffer, which
   * `releaseBuffer` can then free without waiting for garbage collection.
   */
  release(): void;
}

/** The addon module. */
export interface GeoAddon {
  /** Binds a table to a compiled image held in `buffer` (borrowed, not copied). @throws RangeError for a bad layout. */
  open(buffer: ArrayBuffer, layout: NativeLayout): NativeTable;
  /** The 16-byte buffer `lookup6()` reads; one per thread. */
  scratch6(): ArrayBuffer;
  /**
   * A zeroed ArrayBuffer of `bytes` in 2 MiB-aligned memory advised for transparent huge pages,
   * unmapped when collected; undefined when the kernel refuses. Absent from addons built before it.
   * @throws TypeError / RangeError for a byte count that is not a number in 1 … 2^40.
   */
  hugePageBuffer?(bytes: number): ArrayBuffer | undefined;
  /**
   * Detaches `buffer` so its memory is freed now instead of when V8 collects it (a
   * {@link hugePageBuffer} is unmapped at the next turn of the event loop); every view of it then
   * has length 0, so no JavaScript can read the freed memory.
   * @throws Error when the buffer cannot be detached.
   */
  releaseBuffer(buffer: ArrayBuffer): void;
  readonly abi: number;
}

/** Result of trying to load the addon: the module, or why it is unavailable. */
export type AddonLoad = { readonly addon: GeoAddon; readonly path: string } | { readonly addon: undefined; readonly path: string; readonly error: string };

/** ABI version this TypeScript expects (native/addon.cc exports `abi`). */
const ABI = 2;
let cached: AddonLoad | undefined;

/**
 * Loads the native addon once per thread: `$GSLBD_NATIVE_ADDON` when set (the sanitizer build in
 * tests), else `build/Release/gslbd_geo.node` under the package root (built by `npm install`
 * through binding.gyp). Never throws: a missing or broken addon is reported in the result.
 */
export function loadGeoAddon(): AddonLoad {
  if (cached) return cached;
  const path = process.env.GSLBD_NATIVE_ADDON || join(packageRoot(), 'build', 'Release', 'gslbd_geo.node');
  try {
    const addon = createRequire(import.meta.url)(path) as GeoAddon;
    if (addon.abi !== ABI) throw new Error(`ABI ${addon.abi}, expected ${ABI}: rebuild it with npm run build:native`);
    cached = { addon, path };
  } catch (e) {
    cached = { addon: undefined, path, error: (e as Error).message.split('\n')[0]! };
  }
  return cached;
}

/** The directory holding gslbd's package.json and binding.gyp (found from src/core/lpm/ under tsx, dist/src/core/lpm/ when compiled); native addons are under its build/Release/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, 'binding.gyp'))) return dir;
    dir = dirname(dir);
  }
  return dir;
}
