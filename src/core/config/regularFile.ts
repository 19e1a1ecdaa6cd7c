import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * Size caps of the files the engine reads, in bytes: far above any real file of the kind, far
 * below what would exhaust memory (`check-config /dev/zero` once grew to 8 GB).
 */
export const FILE_SIZE_LIMITS = {
  /** The configuration file: a 20,000-record configuration is about 4 MB. */
  config: 64 * 1024 * 1024,
  /** `listeners.admin.tokenFile`: one token. */
  token: 64 * 1024,
  /** Files monitors name (a CA bundle in PEM). */
  monitor: 4 * 1024 * 1024,
  /** Certificates, keys and CA bundles (PEM) of the admin listener and the front doors. */
  tls: 4 * 1024 * 1024,
  /** Location data (`geo.sources`, `geo.compiled`): the full city databases are a few hundred MB. */
  location: 2 * 1024 * 1024 * 1024 - 1,
  /** The health state file. */
  state: 64 * 1024 * 1024,
} as const;

/** Why a file cannot be read as a regular file of at most `maxBytes`, or undefined when it can. */
function kindProblem(
  stat: {
    isFile(): boolean;
    isFIFO(): boolean;
    isCharacterDevice(): boolean;
    isBlockDevice(): boolean;
    isSocket(): boolean;
    isDirectory(): boolean;
    size: number;
  },
  maxBytes: number,
): string | undefined {
  if (!stat.isFile()) {
    const kind = stat.isDirectory()
      ? 'a directory'
      : stat.isFIFO()
        ? 'a FIFO'
        : stat.isCharacterDevice()
          ? 'a character device'
          : stat.isBlockDevice()
            ? 'a block device'
            : stat.isSocket()
              ? 'a socket'
              : 'not a regular file';
    return `is not a regular file (${kind})`;
  }
  if (stat.size > maxBytes) return `is ${stat.size} bytes, more than the limit of ${maxBytes}`;
  return undefined;
}

/**
 * Checks without reading that `full` (symbolic links followed) is a regular file of at most
 * `maxBytes`: the check `check-config`, start-up and every reload make for each file a
 * configuration names, before anything reads it. `shown` is the path as configured, for the message.
 * @returns why it cannot be used (`"ca.pem" is not a regular file (a FIFO)`, `"x.mmdb" is 9 bytes,
 *   more than the limit of 8`, `cannot read "x.csv": ENOENT`), or undefined.
 */
export function referencedFileProblem(shown: string, full: string, maxBytes: number): string | undefined {
  let stat: Stats;
  try {
    stat = statSync(full);
  } catch (e) {
    return `cannot read "${shown}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
  }
  const problem = kindProblem(stat, maxBytes);
  return problem === undefined ? undefined : `"${shown}" ${problem}`;
}

/** A file that is not a regular file, is over its size cap, or cannot be opened. */
export class FileKindError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    /** The system error code when the file could not be opened (`ENOENT`). */
    readonly code?: string,
    /** The message, when not `"<path>" <reason>` (an open's system error, which names the path itself). */
    message?: string,
  ) {
    super(message ?? `"${path}" ${reason}`);
    this.name = 'FileKindError';
  }
}

/**
 * Why `path` could not be opened: its kind when it is there but not a regular file (a Unix
 * socket cannot be opened at all), else the system error with its code.
 */
function openError(path: string, e: unknown): FileKindError {
  try {
    const problem = kindProblem(statSync(path), Infinity);
    if (problem) return new FileKindError(path, problem);
  } catch {
    // Not there at all: the open's own error says so.
  }
  return new FileKindError(path, `cannot read: ${(e as Error).message}`, (e as NodeJS.ErrnoException).code, (e as Error).message);
}

/**
 * Reads a regular file of at most `maxBytes`. The file is opened non-blocking and checked on the
 * open descriptor before any read, so a FIFO, a device (`/dev/zero`) or a directory at the path
 * fails at once instead of blocking or reading without end; a file that grows past the cap while
 * it is read fails too.
 * @throws FileKindError naming the path and the reason.
 */
export function readRegularFile(path: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw openError(path, e);
  }
  try {
    const stat = fstatSync(fd);
    const problem = kindProblem(stat, maxBytes);
    if (problem) throw new FileKindError(path, problem);
    const chunks: Buffer[] = [];
    let total = 0;
    // The first buffer holds the whole file as stat sizes it (one byte more, to see the end):
    // a 55 MB compiled location file is one read and no copy, not 53 reads and a concatenation.
    let size = Math.min(Math.max(stat.size + 1, 1 << 16), maxBytes + 1);
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(size, maxBytes + 1 - total));
      size = 1 << 20;
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new FileKindError(path, `grew past the limit of ${maxBytes} bytes while it was read`);
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/**
 * {@link readRegularFile} without blocking the event loop (the reads run on libuv's thread pool):
 * for large files read on the engine thread, such as compiled location data at a reload.
 * @throws FileKindError naming the path and the reason.
 */
export async function readRegularFileAsync(path: string, maxBytes: number): Promise<Buffer> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw openError(path, e);
  }
  try {
    const stat = await handle.stat();
    const problem = kindProblem(stat, maxBytes);
    if (problem) throw new FileKindError(path, problem);
    // One buffer of the size stat gives (one byte more, to see the end), filled by reads of at most
    // 16 MiB at their offsets: concatenating the pieces of a 55 MB compiled location file held the
    // engine's event loop 45-65 ms at a location reload (issue 17). Only a file that grew since
    // stat takes further pieces and a concatenation.
    const first = Buffer.allocUnsafe(Math.min(stat.size + 1, maxBytes + 1));
    let filled = 0;
    while (filled < first.length) {
      const { bytesRead } = await handle.read(first, filled, Math.min(1 << 24, first.length - filled), null);
      if (bytesRead === 0) return first.subarray(0, filled);
      filled += bytesRead;
    }
    const chunks: Buffer[] = [first];
    let total = filled;
    // Each read is capped at the limit plus one byte: a file still growing fails at the next check.
    for (;;) {
      if (total > maxBytes) throw new FileKindError(path, `grew past the limit of ${maxBytes} bytes while it was read`);
      const chunk = Buffer.allocUnsafe(Math.min(1 << 24, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks, total);
      total += bytesRead;
      chunks.push(bytesRead === chunk.length ? chunk : chunk.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
}
