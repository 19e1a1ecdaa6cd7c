/** How many reloads {@link ReloadHistory.recent} keeps. */
export const RELOAD_HISTORY_LENGTH = 20;

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
  private readonly recentAttempts: ReloadAttempt[] = [];

  succeeded(reason: string, generation: number, atMs: number): void {
    this.keep({ reason, atMs, generation });
    this.failingSinceMs = undefined;
  }

  failed(reason: string, error: string, atMs: number): void {
    this.keep({ reason, atMs, error });
    this.failingSinceMs ??= atMs;
  }

  /** The last {@link RELOAD_HISTORY_LENGTH} reloads, newest first (the console's reload history). */
  recent(): readonly ReloadAttempt[] {
    return this.recentAttempts;
  }

  private keep(attempt: ReloadAttempt): void {
    this.last = attempt;
    this.recentAttempts.unshift(attempt);
    if (this.recentAttempts.length > RELOAD_HISTORY_LENGTH) this.recentAttempts.pop();
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
