import type { Logger } from './logger.js';

/** Interval of {@link RateLimitedLog} by default (ms): one line a minute per kind. */
export const RATE_LIMITED_LOG_INTERVAL_MS = 60000;

/**
 * Warnings caused by peers (a malformed request, a bad field), at most one line per kind and
 * interval: a peer that sends thousands of bad requests must not fill the log or spend the
 * engine's time writing it. The first line of an interval carries how many were left out
 * before it (`suppressed`); metrics count every one.
 */
export class RateLimitedLog {
  /** Per kind: when its last line was written, and how many were left out since. */
  private readonly kinds = new Map<string, { atMs: number; suppressed: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = RATE_LIMITED_LOG_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes `msg` at warn level unless a line of `kind` (a fixed label, never peer data) was written within the interval. */
  warn(kind: string, fields: Record<string, unknown>, msg: string): void {
    const at = this.now();
    const last = this.kinds.get(kind);
    if (last && at - last.atMs < this.intervalMs) {
      last.suppressed++;
      return;
    }
    this.kinds.set(kind, { atMs: at, suppressed: 0 });
    this.log.warn(last && last.suppressed > 0 ? { ...fields, suppressed: last.suppressed } : fields, msg);
  }
}
