import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { DerivedTableStore } from '../../core/location/locationDb.js';
import { writeAtomically } from './compiledCache.js';

/** Files kept in a store's directory; older ones are removed after a write (each reload of a changed policy may add one). */
const KEPT_FILES = 16;

/**
 * Derived tables of a compiled location file (issue 26: a restart answers its first query within a
 * second), as files in `dir` (beside the compiled file, `<compiled>.derived/`): one file per key,
 * named by the SHA-256 of the file's `compiledFileIdentity` (`compiledCache.ts`) and the key, so tables of any
 * other version of the data are never read. Writes are atomic (temporary file and rename);
 * failures are ignored (the caller builds the tables again next time).
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
    write(key, bytes) {
      try {
        writeAtomically(path(key), bytes);
        prune(dir);
      } catch {
        // Best effort: a read-only or full directory costs the next start the build.
      }
    },
  };
}

/** Removes all but the {@link KEPT_FILES} most recently written files of `dir`. */
function prune(dir: string): void {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t);
  for (const { f } of files.slice(KEPT_FILES)) unlinkSync(join(dir, f));
}
