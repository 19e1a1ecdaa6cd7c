import { mkdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A temporary file's name beside `file`, unique to this process and call. */
function temporaryName(file: string): string {
  return `${file}.tmp-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

/**
 * Writes `bytes` to `file` through a temporary file in the same directory and a rename, so a
 * reader (another engine starting) sees the old file or the new one, never a part; the directory
 * is created first. Synchronous: for the command line and start-up, never a running engine's
 * event loop ({@link writeAtomicallyAsync}).
 * @throws Error when the directory cannot be created or the file written (the temporary file is removed).
 */
export function writeAtomically(file: string, bytes: Uint8Array): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = temporaryName(file);
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // Never created.
    }
    throw e;
  }
}

/**
 * {@link writeAtomically} on the thread pool: a running engine writes tens of MB (the derived
 * location tables) without holding the event loop (issue 17). The temporary name differs per call,
 * so two writes of one file never share one; the health state file keeps its own writer, whose
 * error messages must not change from write to write (`stateFile.ts`).
 * `data` must not change until the promise settles.
 * @param options - `mode` of a new file (default 0o666 less the umask); `createDirectory`: create
 *   the directory first (default false: a missing directory is an error)
 * @throws Error from the file system (the temporary file is removed)
 */
export async function writeAtomicallyAsync(file: string, data: string | Uint8Array, options: { mode?: number; createDirectory?: boolean } = {}): Promise<void> {
  if (options.createDirectory) await mkdir(dirname(file), { recursive: true });
  const tmp = temporaryName(file);
  try {
    await writeFile(tmp, data, options.mode === undefined ? {} : { mode: options.mode });
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}
