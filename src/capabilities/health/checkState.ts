import type { HealthStatus } from '../../core/views/healthView.js';

/** The state of one check (a monitor against one target), updated in place by {@link applyResult}. */
export interface CheckState {
  status: HealthStatus;
  /** Consecutive results against the current status: failures while up, successes while down. */
  streak: number;
  /** When `status` was entered (ms since the epoch); for unknown, when the check was created. */
  sinceMs: number;
  /** Last successful result (ms since the epoch), 0 when none. */
  lastSuccessMs: number;
  /** Last result of any kind (ms since the epoch), 0 when none. */
  lastResultMs: number;
  /** How long the last result took (ms), −1 when none (the console's last check latency). */
  lastLatencyMs: number;
  /** Why the last failed result failed ('' after a success). */
  lastError: string;
  /**
   * `status` was carried over from an earlier definition of the same check (a reload changed
   * the monitor, not the target): it stands until the new definition's first result, which then
   * decides at once, as from `unknown`.
   */
  provisional: boolean;
}

/** A check that has no result yet. */
export function unknownCheckState(nowMs: number): CheckState {
  return { status: 'unknown', streak: 0, sinceMs: nowMs, lastSuccessMs: 0, lastResultMs: 0, lastLatencyMs: -1, lastError: '', provisional: false };
}

/**
 * Applies one check result (src/capabilities/health/README.md, "State model"):
 * - `unknown` is left at the first result: a success makes it `up`, a failure `down` (there is no
 *   earlier state to protect from flapping; HAProxy likewise starts a server one failure from
 *   down, and gdnsd takes the first round of results as they are); so is a `provisional` status
 *   carried over from the check's earlier definition (the result is the first of the new one);
 * - `up` goes `down` after `fall` consecutive failures; `down` goes `up` after `rise`
 *   consecutive successes; a result in line with the status resets the streak.
 * So a target alternating success and failure with rise = fall = 2 never changes state.
 * @returns true when the status changed.
 */
export function applyResult(state: CheckState, ok: boolean, nowMs: number, rise: number, fall: number, error = ''): boolean {
  state.lastResultMs = nowMs;
  if (ok) {
    state.lastSuccessMs = nowMs;
    state.lastError = '';
  } else {
    state.lastError = error || 'failed';
  }
  let next: HealthStatus = state.status;
  if (state.status === 'unknown' || state.provisional) {
    state.provisional = false;
    next = ok ? 'up' : 'down';
  } else if ((state.status === 'up') === ok) {
    state.streak = 0;
  } else {
    state.streak++;
    if (state.streak >= (ok ? rise : fall)) next = ok ? 'up' : 'down';
  }
  if (next === state.status) return false;
  state.status = next;
  state.streak = 0;
  state.sinceMs = nowMs;
  return true;
}

/**
 * The combined status of several checks of one target: down when any is down, else unknown when
 * any has no result, else up (an endpoint is up when all its monitors are). No checks: up.
 */
export function combineStatus(statuses: Iterable<HealthStatus>): HealthStatus {
  let unknown = false;
  for (const s of statuses) {
    if (s === 'down') return 'down';
    if (s === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : 'up';
}

/**
 * A data center's status from one group of check points (WAN or LAN) by `rule`: `all` (every
 * point up), `any` (one up), `quorum` (more than half up). Points without a result make the
 * group unknown only while the others leave the outcome open. An empty group is undefined.
 */
export function groupStatus(rule: 'all' | 'any' | 'quorum', statuses: readonly HealthStatus[]): HealthStatus | undefined {
  const n = statuses.length;
  if (n === 0) return undefined;
  let up = 0;
  let down = 0;
  for (const s of statuses) {
    if (s === 'up') up++;
    else if (s === 'down') down++;
  }
  const need = rule === 'all' ? n : rule === 'any' ? 1 : Math.floor(n / 2) + 1;
  if (up >= need) return 'up';
  if (n - down < need) return 'down';
  return 'unknown';
}
