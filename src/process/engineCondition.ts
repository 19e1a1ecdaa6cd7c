import type { DegradedReason, EngineCondition } from '../admin/engineCondition.js';
import type { FailsafeInUse, FailsafeWatch } from '../capabilities/health/failsafeWatch.js';
import type { StaleMetricRow } from '../capabilities/steering/metricStore.js';
import type { ReloadAttempt, ReloadHistory } from './reloadHistory.js';

/**
 * The engine's condition for `/healthz` and `/status`: degraded while a GSLB record answers by
 * its all-down policy (the fail-safe list, fail-open or fail-closed NODATA) or while the last
 * reload failed (the engine serves a configuration that is no longer the file's), with the
 * reasons and since when; degraded too while pushed host or service metrics are stale (their push
 * pipeline stopped: the gates and ranks that read them fall back, docs/PRODUCT.md §3).
 * `staleMetrics` gives the stale rows now (MetricStore.staleRows).
 */
export function engineCondition(failsafe: FailsafeWatch, reloads: ReloadHistory, staleMetrics: () => readonly StaleMetricRow[] = () => []): EngineCondition {
  const reasons: DegradedReason[] = [];
  const inUse = failsafe.inUse();
  if (inUse.length > 0) reasons.push(failsafeReason(inUse));
  const failingSince = reloads.failingSince();
  const last = reloads.lastAttempt();
  if (failingSince !== undefined && last?.error !== undefined) {
    reasons.push({
      kind: 'reload-failed',
      message: 'the last reload failed; the engine serves the previous configuration',
      since: iso(failingSince),
      detail: { reason: last.reason, at: iso(last.atMs), error: last.error },
    });
  }
  const stale = staleMetrics();
  if (stale.length > 0) {
    reasons.push({
      kind: 'stale-metrics',
      message: `${stale.length} pushed metric row${stale.length === 1 ? ' is' : 's are'} stale: no push within their staleAfterSeconds`,
      since: iso(Math.min(...stale.map((r) => r.staleSinceMs))),
      detail: stale.map((r) => ({ source: r.source, ...(r.service !== undefined ? { service: r.service } : {}), dc: r.dc, lastPush: iso(r.lastPushMs) })),
    });
  }
  return {
    status: reasons.length > 0 ? 'degraded' : 'ok',
    reasons,
    ...(last ? { lastReload: reloadJson(last) } : {}),
    reloads: reloads.recent().map(reloadJson),
  };
}

/** The fail-safe reasons of the lists `FailsafeWatch.inUse` gave (the same list until a record enters or leaves). */
const failsafeReasons = new WeakMap<readonly FailsafeInUse[], DegradedReason>();

/**
 * The `failsafe` reason for the records in `inUse`, built once per list: with 20,000 records in
 * the fallback its detail took 10-30 ms at each `/healthz` and `/status` (issue 17). The earliest
 * `since` by a loop: a spread of that many arguments nears the engine's argument limit.
 */
function failsafeReason(inUse: readonly FailsafeInUse[]): DegradedReason {
  let reason = failsafeReasons.get(inUse);
  if (!reason) {
    let earliest = Infinity;
    for (const f of inUse) earliest = Math.min(earliest, f.sinceMs);
    reason = {
      kind: 'failsafe',
      message: `${inUse.length} GSLB record${inUse.length === 1 ? '' : 's'} answer${inUse.length === 1 ? 's' : ''} by the all-down policy: every endpoint is out`,
      since: iso(earliest),
      detail: inUse.map((f) => ({ record: f.record, allDown: f.allDown, answer: f.answer, since: iso(f.sinceMs) })),
    };
    failsafeReasons.set(inUse, reason);
  }
  return reason;
}

function reloadJson(r: ReloadAttempt): object {
  return { reason: r.reason, at: iso(r.atMs), ...(r.error !== undefined ? { error: r.error } : { generation: r.generation }) };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
