/**
 * The contract of one running check, shared by every check kind and the monitor: where it
 * connects, what it reports, how it is started. Imports no check kind (the kinds import it).
 */

/** Where a check connects: an address and port, and the host name for HTTP Host and TLS SNI. */
export interface CheckTarget {
  readonly address: string;
  readonly port: number;
  readonly host: string | undefined;
}

/** The result of one check. Latency in ms from start to the deciding event. */
export interface CheckOutcome {
  readonly ok: boolean;
  readonly latencyMs: number;
  /** Why it failed (a socket error code, `timeout`, `status 503`, …); '' on success. */
  readonly error: string;
}

/** Receives the one outcome of a check. */
export type CheckDone = (outcome: CheckOutcome) => void;

/**
 * Starts one check of its target: calls `done` exactly once, never synchronously, and within the
 * monitor's timeout (plus a scheduling tick); never throws. A callback rather than a promise:
 * at 2,000 checks/s a promise and its reaction per check are measurable (docs/BENCHMARKS-HISTORY.md, health).
 */
export type CheckStart = (done: CheckDone) => void;

/**
 * A monitor's check: prepares a target once (what never changes between its checks, such as an
 * HTTP request's bytes and the SNI name) and returns how to start each check of it.
 */
export type CheckRun = (target: CheckTarget) => CheckStart;

/** Milliseconds since `startMs` (a `performance.now()` reading: monotonic, and no BigInt per check). */
export function elapsedMs(startMs: number): number {
  return performance.now() - startMs;
}

/**
 * A check's one outcome: the first call releases the check's resources (`release`: its deadline
 * and socket), then reports the latency since `startMs` to `done`; later calls (a late timeout,
 * an error after the answer) do nothing.
 */
export function outcomeOnce(startMs: number, done: CheckDone, release: () => void): (ok: boolean, error: string) => void {
  let settled = false;
  return (ok, error) => {
    if (settled) return;
    settled = true;
    release();
    done({ ok, latencyMs: elapsedMs(startMs), error });
  };
}
