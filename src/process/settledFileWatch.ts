import { createHash } from 'node:crypto';
import { realpathSync, statSync, watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { FILE_SIZE_LIMITS, readRegularFile } from '../core/config/regularFile.js';
import type { Logger } from '../core/telemetry/logger.js';

/** How a watched file changed. */
export type FileChange = 'replaced' | 'written';

/** Timings of {@link watchSettledFile} (ms). */
export interface SettledWatchTimings {
  /** Quiet time after the last directory event before the file is looked at (bursts of events are one change). */
  readonly debounceMs: number;
  /** Interval of the polls that decide an in-place write has settled. */
  readonly pollMs: number;
}

/** The engine's timings: two polls 500 ms apart (a writer that pauses longer than that is rare). */
export const SETTLE_TIMINGS: SettledWatchTimings = { debounceMs: 100, pollMs: 500 };

/** What identifies the file a path leads to, and its last write. */
interface Identity {
  /** The path with every symbolic link resolved (a Kubernetes ConfigMap swaps the `..data` link). */
  readonly real: string;
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

function identityOf(file: string): Identity | undefined {
  try {
    const real = realpathSync(file);
    const s = statSync(real);
    return { real, dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
  } catch {
    return undefined;
  }
}

/** Size, mtime and content hash: what must hold still across two polls. */
function contentState(file: string): string | undefined {
  const id = identityOf(file);
  if (!id) return undefined;
  try {
    const hash = createHash('sha256').update(readRegularFile(id.real, FILE_SIZE_LIMITS.config)).digest('hex');
    return `${id.real}\0${id.dev}:${id.ino}\0${id.size}\0${id.mtimeMs}\0${hash}`;
  } catch {
    return undefined;
  }
}

/**
 * Watches a configuration file and calls `onChange` once per finished change:
 * - **replaced** (a rename over the path, `mv`, editors' atomic saves, the Kubernetes ConfigMap
 *   `..data` symlink swap; any change of the resolved path, device or inode): at once, after
 *   {@link SettledWatchTimings.debounceMs} of quiet — a rename is the writer saying it is done;
 * - **written** in place (`cat >`, scp, `rsync --inplace`; same file, new size or mtime): only once
 *   size, mtime and content hash are unchanged over two polls {@link SettledWatchTimings.pollMs}
 *   apart, so a half-written file is never applied (its prefix may be valid YAML with records
 *   missing). Whether the settled file parses is the reload's check: an invalid one is logged
 *   and the running configuration stays.
 *
 * Watches the file's directory and, when the path is a symbolic link, the directory of its
 * target, with `fs.watch` (inotify on Linux): events name entries, not files, so every event
 * leads to comparing the file's identity with the last one seen. A missing file is waited for.
 * (node:fs rather than chokidar: chokidar's `awaitWriteFinish` compares sizes only and its
 * `atomic` option merges the replace and the in-place cases this watch keeps apart.)
 * @returns `close()`, or undefined when the directory cannot be watched (logged: reload with
 *   SIGHUP or the admin API).
 */
export function watchSettledFile(
  file: string,
  onChange: (change: FileChange) => void,
  log: Logger,
  timings: SettledWatchTimings = SETTLE_TIMINGS,
): { close(): void } | undefined {
  let seen = identityOf(file);
  let debounce: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  let lastPoll: string | undefined;
  let closed = false;

  const stopPolling = (): void => {
    clearTimeout(poll);
    poll = undefined;
    lastPoll = undefined;
  };
  const pollOnce = (): void => {
    poll = undefined;
    if (closed) return;
    const id = identityOf(file);
    if (id && seen && (id.real !== seen.real || id.dev !== seen.dev || id.ino !== seen.ino)) return look();
    const state = contentState(file);
    if (state !== undefined && state === lastPoll) {
      stopPolling();
      seen = id;
      onChange('written');
      return;
    }
    lastPoll = state;
    poll = setTimeout(pollOnce, timings.pollMs);
  };
  const look = (): void => {
    debounce = undefined;
    if (closed) return;
    const id = identityOf(file);
    if (!id) return;
    if (!seen || id.real !== seen.real || id.dev !== seen.dev || id.ino !== seen.ino) {
      stopPolling();
      seen = id;
      rewatch();
      onChange('replaced');
      return;
    }
    if (id.size === seen.size && id.mtimeMs === seen.mtimeMs) return;
    if (poll === undefined) {
      lastPoll = contentState(file);
      poll = setTimeout(pollOnce, timings.pollMs);
    }
  };
  const onEvent = (): void => {
    clearTimeout(debounce);
    debounce = setTimeout(look, timings.debounceMs);
  };

  const watchers = new Map<string, FSWatcher>();
  const rewatch = (): void => {
    const dirs = new Set([dirname(file)]);
    if (seen) dirs.add(dirname(seen.real));
    for (const [dir, w] of watchers) {
      if (!dirs.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    for (const dir of dirs) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, onEvent);
        w.on('error', (e) => log.warn({ err: e, dir }, 'configuration file watch failed'));
        watchers.set(dir, w);
      } catch (e) {
        log.warn({ err: e, dir }, 'cannot watch the configuration file; reload with SIGHUP or the admin API');
      }
    }
  };
  rewatch();
  if (watchers.size === 0) return undefined;
  return {
    close() {
      closed = true;
      clearTimeout(debounce);
      stopPolling();
      for (const w of watchers.values()) w.close();
    },
  };
}
