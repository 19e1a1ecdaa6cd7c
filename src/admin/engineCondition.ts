/** One reason the engine is degraded: it answers, but not the way its configuration intends. */
export interface DegradedReason {
  /** Stable kind: `failsafe` (records answer by their all-down policy), `reload-failed`, `stale-metrics` (pushed host or service metrics stopped arriving). */
  readonly kind: string;
  /** One line for people. */
  readonly message: string;
  /** Since when (ISO 8601 UTC). */
  readonly since: string;
  /** Details by kind (the records in the fail-safe, the reload's error). */
  readonly detail?: unknown;
}

/**
 * What `/healthz` and `/status` report about the engine's condition: `ok`, or `degraded` with its
 * reasons. A degraded engine still answers 200 on `/healthz` (it serves DNS; a load balancer must
 * not take it out), and the reasons say what an operator has to look at.
 */
export interface EngineCondition {
  readonly status: 'ok' | 'degraded';
  readonly reasons: readonly DegradedReason[];
  /** The last reload, when one ran: `{ reason, at, generation }` or `{ reason, at, error }`. */
  readonly lastReload?: unknown;
  /** The recent reloads, newest first, in the form of `lastReload` (the console's reload history). */
  readonly reloads?: readonly unknown[];
}
