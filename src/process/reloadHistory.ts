/** One reload attempt. */
export interface ReloadAttempt {
  /** What asked for it: `SIGHUP`, `file changed`, `admin API`. */
  readonly reason: string;
  /** When it ended (ms since the epoch). */
  readonly atMs: number;
  /** The generation published (successful reloads). */
  readonly generation?: number;
  /** Why the running configuration was kept (failed reloads). */
  readonly error?: string;
}

/**
 * The outcome of the last reload and, while reloads keep failing, when the first of them failed:
 * `/healthz` and `/status` report "degraded" from then until a reload succeeds (the engine keeps
 * answering from the last good configuration, which no longer matches the file on disk).
 */
export class ReloadHistory {
  private last: ReloadAttempt | undefined;
  private failingSinceMs: number | undefined;

  succeeded(reason: string, generation: number, atMs: number): void {
    this.last = { reason, atMs, generation };
    this.failingSinceMs = undefined;
  }

  failed(reason: string, error: string, atMs: number): void {
    this.last = { reason, atMs, error };
    this.failingSinceMs ??= atMs;
  }

  /** The last reload (undefined before the first). */
  lastAttempt(): ReloadAttempt | undefined {
    return this.last;
  }

  /** When reloads started failing (ms since the epoch); undefined when the last one succeeded or none ran. */
  failingSince(): number | undefined {
    return this.failingSinceMs;
  }
}
