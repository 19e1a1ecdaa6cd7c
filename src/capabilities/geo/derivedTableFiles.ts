import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomicallyAsync } from '../../core/config/atomicWrite.js';
import type { DerivedTableStore } from '../../core/location/locationDb.js';

/** Files kept in a store's directory; older ones are removed after a write (each reload of a changed policy may add one). */
const KEPT_FILES = 16;

/**
 * Derived tables of a compiled location file (issue 26: a restart answers its first query within a
 * second), as files in `dir` (beside the compiled file, `<compiled>.derived/`): one file per key,
 * named by the SHA-256 of the file's `compiledFileIdentity` (`compiledCache.ts`) and the key, so tables of any
 * other version of the data are never read. Writes are atomic (temporary file and rename) and
 * asynchronous: the tables of the city data are tens of MB, and writing them in one turn held the
 * event loop 55-175 ms in a location reload (issue 17). Failures are ignored (the caller builds the
 * tables again next time); a read before a write finished finds nothing, as before any write.
 */
export function derivedTableFiles(dir: string, identity: string): DerivedTableStore {
  const path = (key: string): string => join(dir, `${createHash('sha256').update(identity).update('\0').update(key).digest('hex')}.bin`);
  return {
    read(key) {
      try {
        return readFileSync(path(key));
      } catch {
        return undefined;
      }
    },
    async write(key, bytes) {
      try {
        await writeAtomicallyAsync(path(key), bytes, { createDirectory: true });
        await prune(dir);
      } catch {
        // Best effort: a read-only or full directory costs the next start the build.
      }
    },
  };
}

/** Removes all but the {@link KEPT_FILES} most recently written files of `dir`. */
async function prune(dir: string): Promise<void> {
  const names = (await readdir(dir)).filter((f) => f.endsWith('.bin'));
  const files = await Promise.all(names.map(async (f) => ({ f, t: (await stat(join(dir, f))).mtimeMs })));
  files.sort((a, b) => b.t - a.t);
  for (const { f } of files.slice(KEPT_FILES)) await unlink(join(dir, f)).catch(() => undefined);
}
