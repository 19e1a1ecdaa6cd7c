import { rename } from 'node:fs/promises';
import type { Logger } from '../../core/telemetry/logger.js';
import { readStateFile, STATE_FILE_FUTURE_TOLERANCE_MS, writeStateFile, type LoadedState, type SavedState } from './stateFile.js';

/** What a {@link StateFileKeeper} needs. */
export interface StateFileKeeperOptions {
  readonly log: Logger;
  /** The state to write (`writtenAtMs` included), taken at each write. */
  readonly state: () => SavedState;
  /** Delay (ms) between a change and the write, so bursts write once. */
  readonly writeDelayMs: number;
}

/** What `GET /health` shows of the state file. */
export interface StateFileReport {
  readonly path: string | null;
  /** `ageMs` is negative for a file written in the future; `keptAs`: where an unusable file is moved before the first write. */
  readonly atStart: { used: boolean; reason?: string; ageMs?: number; keptAs?: string };
}

/**
 * The health state file of a running monitor (format and staleness: `stateFile.ts`): read at the
 * first configure, written `writeDelayMs` after a change and at stop. An unusable file found at
 * start is moved to its keep-aside path before the first write; a failed write is logged once
 * per distinct error and retried at the next change (src/capabilities/health/README.md, "Failure
 * behaviour").
 */
export class StateFileKeeper {
  private path: string | undefined;
  private load: LoadedState | undefined;
  /** An unusable state file found at start has been moved aside (done once, before the first write). */
  private unusableKeptAside = false;
  /** The message of the last failed write, so a repeated failure is logged once. */
  private writeError: string | undefined;
  private writeTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly opts: StateFileKeeperOptions) {}

  /**
   * Adopts the configured path (absolute; undefined: none). On the first call, reads the file and
   * logs what it found; returns it when it was loaded (its statuses may still be too old to use:
   * `statusesUsed`), and undefined on later calls.
   */
  configure(path: string | undefined, nowMs: number, maxAgeMs: number): Extract<LoadedState, { kind: 'loaded' }> | undefined {
    const first = this.load === undefined;
    this.path = path;
    if (!first) return undefined;
    const load = path !== undefined ? readStateFile(path, nowMs, maxAgeMs) : ({ kind: 'none', reason: 'no state file configured' } as const);
    this.load = load;
    this.logLoad(load, maxAgeMs);
    return load.kind === 'loaded' ? load : undefined;
  }

  /** Writes soon (after the write delay), once for every change until then. */
  queueWrite(): void {
    if (this.path === undefined || this.writeTimer) return;
    this.writeTimer = setTimeout(() => {
      this.writeTimer = undefined;
      this.writing = this.writing.then(() => this.write());
    }, this.opts.writeDelayMs);
    this.writeTimer.unref();
  }

  /** Cancels a queued write, waits for one in progress, and writes the state one last time. */
  async stop(): Promise<void> {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    await this.writing;
    await this.write();
  }

  /** The path and what reading it at start gave. */
  report(): StateFileReport {
    const load = this.load;
    return {
      path: this.path ?? null,
      atStart:
        load === undefined || load.kind !== 'loaded'
          ? {
              used: false,
              reason: load?.reason ?? 'not read',
              ...(load?.kind === 'unusable' && load.keepAsidePath !== undefined ? { keptAs: load.keepAsidePath } : {}),
            }
          : { used: load.statusesUsed, ageMs: load.ageMs },
    };
  }

  private async write(): Promise<void> {
    const path = this.path;
    if (path === undefined) return;
    const state = this.opts.state();
    try {
      await this.keepUnusableFileAside();
      await writeStateFile(path, state);
    } catch (e) {
      // Checks that flap write every 200 ms: a lasting failure (a directory at the path, a full
      // disk) is logged once, not with every change; another error or a success is logged again.
      const error = (e as Error).message;
      if (error !== this.writeError)
        this.opts.log.warn({ path, error }, 'cannot write the health state file (retried at each change; logged again when the error changes)');
      this.writeError = error;
      return;
    }
    if (this.writeError !== undefined) this.opts.log.info({ path }, 'health state file written again');
    this.writeError = undefined;
  }

  /**
   * Moves the unusable state file found at start to its keep-aside path before the first new state
   * replaces it: it may hold overrides an operator wants back. When the move fails the write is
   * not done either (the file stays as it was) and the next write tries again.
   * @throws Error when the file is there but cannot be moved.
   */
  private async keepUnusableFileAside(): Promise<void> {
    const load = this.load;
    if (load?.kind !== 'unusable' || load.keepAsidePath === undefined || this.unusableKeptAside) return;
    try {
      await rename(load.path, load.keepAsidePath);
      this.opts.log.warn({ path: load.path, keptAs: load.keepAsidePath }, 'unusable health state file kept aside before writing a new one');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`cannot keep the unusable state file aside as ${load.keepAsidePath}: ${(e as Error).message}`);
    }
    this.unusableKeptAside = true;
  }

  private logLoad(load: LoadedState, maxAgeMs: number): void {
    const log = this.opts.log;
    if (load.kind === 'none') {
      if (this.path !== undefined) log.info({ path: this.path, reason: load.reason }, 'health state file not used');
    } else if (load.kind === 'unusable') {
      log.warn(
        { path: load.path, reason: load.reason, keptAs: load.keepAsidePath },
        load.keepAsidePath !== undefined
          ? 'health state file unusable: checks start unknown, its overrides are not applied; before the first new state is written it is moved to keptAs (recover overrides from it by hand)'
          : 'health state file unusable: checks start unknown, its overrides are not applied',
      );
    } else if (load.ageMs < -STATE_FILE_FUTURE_TOLERANCE_MS) {
      log.warn(
        { path: this.path, aheadMs: -load.ageMs, toleranceMs: STATE_FILE_FUTURE_TOLERANCE_MS },
        'health state file written in the future (clock went back?): checks start unknown (overrides kept)',
      );
    } else if (load.statusesUsed) {
      log.info({ path: this.path, ageMs: load.ageMs, checks: Object.keys(load.state.checks).length }, 'health state restored from the state file');
    } else {
      log.warn({ path: this.path, ageMs: load.ageMs, maxAgeMs }, 'health state file too old: checks start unknown (overrides kept)');
    }
  }
}
