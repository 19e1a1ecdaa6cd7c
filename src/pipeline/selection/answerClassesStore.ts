import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CompiledDataCenter } from '../../core/model/topology.js';
import type { LocationReader } from './stage.js';
import type { Steps } from './steps.js';

/**
 * Answer-class tables kept between starts (issue 26: a restart answers its first query within a
 * second; building them is about 0.6 s of CPU for a proximity record over the city data): what
 * `answerClasses.ts` stores in a location database's `derivedTables` and reads back instead of
 * building. Only numbers are stored — each class's representative location id and the merged
 * ranges with their class ids —; what the readers keep per class is computed again from the
 * representatives (hundreds of locations instead of all of them), so nothing of a reader's own
 * data has to be serialisable.
 *
 * Never stale: the key holds everything the tables are computed from — the readers (their slots
 * and ids, the text of their configuration), the candidate data centers (index, name, location,
 * coordinates, site), and the engine's code (sizes and modification times of every file of the
 * running program: `dist/src/`, the bundle, or `src/` under tsx), so an upgrade or a rebuild
 * builds them again; the store adds the identity of the location data's bytes. Tables that do not
 * decode (a torn or foreign file) are built as if absent.
 */

/** Format of the stored words; a change of layout changes it. */
const FORMAT = 1;
const MAGIC = 0x67636c31; // "gcl1"

/** The merged ranges of one family: starts (1 word per IPv4 range, 4 per IPv6 range) and class ids. */
export interface ClassRanges {
  readonly starts: Uint32Array;
  readonly ids: Uint32Array;
}

/** What is stored of one record's tables. */
export interface StoredClasses {
  /** Location id of each class's representative (its first location), by class id. */
  readonly representatives: Uint32Array;
  readonly v4: ClassRanges;
  readonly v6: ClassRanges;
}

/** The store key of the tables of `readers` over `candidates` (see above). */
export function storedClassesKey(readers: readonly LocationReader[], candidates: readonly CompiledDataCenter[]): string {
  return JSON.stringify([
    'answer-classes',
    FORMAT,
    codeStamp(),
    readers.map((r) => [r.slot, r.id]),
    candidates.map((c) => [c.index, c.name, c.qualifiers, c.lat ?? null, c.lon ?? null, c.site]),
  ]);
}

/** The stored bytes of tables: header, representatives, IPv4 starts and ids, IPv6 starts and ids (32-bit words, host order). */
export function encodeClasses(t: StoredClasses): Uint8Array {
  const header = [MAGIC, FORMAT, t.representatives.length, t.v4.ids.length, t.v6.ids.length];
  const parts = [Uint32Array.from(header), t.representatives, t.v4.starts, t.v4.ids, t.v6.starts, t.v6.ids];
  const words = new Uint32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    words.set(p, at);
    at += p.length;
  }
  return new Uint8Array(words.buffer);
}

/**
 * Words checked between two yields of {@link decodeClassesSteps}: a record's stored tables over the
 * city data are 1–1.4 million words, and checking them in one turn of a location reload held the
 * event loop 68–116 ms at load 3 (issue 17; a CPU profile of `test/geo/reloadMemoryRun.ts`).
 */
const CHECK_STEP = 1 << 16;

/**
 * Tables from their stored bytes, as steps (`steps.ts`: a reload decodes in slices), or undefined
 * when the bytes are not tables of this format over a database of `locationCount` locations
 * (wrong size, a representative or class id out of range, starts not ascending).
 */
export function* decodeClassesSteps(bytes: Uint8Array, locationCount: number): Steps<StoredClasses | undefined> {
  if (bytes.byteLength % 4 !== 0 || bytes.byteLength < 20) return undefined;
  const words = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const [magic, format, classCount, n4, n6] = words;
  if (magic !== MAGIC || format !== FORMAT || classCount === 0 || words.length !== 5 + classCount! + 2 * n4! + 5 * n6!) return undefined;
  yield;
  let at = 5;
  const take = (n: number): Uint32Array => words.subarray(at, (at += n));
  const representatives = take(classCount!);
  const v4 = { starts: take(n4!), ids: take(n4!) };
  const v6 = { starts: take(4 * n6!), ids: take(n6!) };
  if (!(yield* below(representatives, locationCount)) || !(yield* below(v4.ids, classCount!)) || !(yield* below(v6.ids, classCount!))) return undefined;
  if (!(yield* ascending(v4.starts, 1)) || !(yield* ascending(v6.starts, 4))) return undefined;
  return { representatives, v4, v6 };
}

// Plain loops, not `some`: they run over hundreds of thousands of words per record's tables on
// every start, where a callback per word costs 50-250 ms cold.

/** Whether every word of `words` is below `limit`, yielding every {@link CHECK_STEP} words. */
function* below(words: Uint32Array, limit: number): Steps<boolean> {
  for (let from = 0; from < words.length; from += CHECK_STEP) {
    const to = Math.min(words.length, from + CHECK_STEP);
    for (let i = from; i < to; i++) if (words[i]! >= limit) return false;
    yield;
  }
  return true;
}

/** Whether range starts of `stride` words each are strictly ascending, yielding every {@link CHECK_STEP} words. */
function* ascending(starts: Uint32Array, stride: 1 | 4): Steps<boolean> {
  for (let from = stride; from < starts.length; from += CHECK_STEP) {
    const to = Math.min(starts.length, from + CHECK_STEP);
    if (stride === 1) {
      for (let i = from; i < to; i++) if (starts[i]! <= starts[i - 1]!) return false;
    } else {
      for (let i = from; i < to; i += stride) {
        let cmp = 0;
        for (let w = 0; w < stride && cmp === 0; w++) cmp = starts[i + w]! - starts[i - stride + w]!;
        if (cmp <= 0) return false;
      }
    }
    yield;
  }
  return true;
}

let stamp: string | undefined;

/**
 * Sizes and modification times of every file of the running program's code, hashed: the folder
 * this module is in (`pipeline/selection/` under `src/` or `dist/src/`, or the bundle's folder)
 * up to the nearest `src` or `bundle` folder, walked whole. Computed once per process (a few ms).
 */
function codeStamp(): string {
  if (stamp !== undefined) return stamp;
  let root = dirname(fileURLToPath(import.meta.url));
  for (let up = root, i = 0; i < 4; i++, up = dirname(up)) {
    if (basename(up) === 'src' || basename(up) === 'bundle') {
      root = up;
      break;
    }
  }
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(js|ts|mjs|cjs)$/.test(entry.name)) {
        const st = statSync(path, { bigint: true });
        hash.update(`${path}\0${st.size}\0${st.mtimeNs}\n`);
      }
    }
  };
  walk(root);
  return (stamp = hash.digest('hex'));
}
