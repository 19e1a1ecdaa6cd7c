import type { HealthView } from '../../core/views/healthView.js';
import type { CompiledRecordHealth, CompiledTier } from './recordHealth.js';
import { selectionNow, type LiveDc, type RecordAvailability, type Stage } from '../../pipeline/selection/stage.js';
import { type GslbEndpoint } from '../../core/model/topology.js';

/** Why an endpoint was left out, as the /explain trace says it. */
type OutReason = 'down' | 'data center down' | 'forced down' | 'drained';

/** The gate's decision for one record on one health view. */
interface GateOutcome extends RecordAvailability {
  readonly live: LiveDc[];
  /** The outcome holds until this time (ms); finite only while a cold-start wait is running. */
  readonly validUntilMs: number;
}

/** Trace detail, collected only for /explain. */
interface GateDetail {
  out: { endpoint: string; reason: OutReason }[];
  unknown: string[];
  waiting: string[];
  tiers: { tier: string; upWeight: number; totalWeight: number; threshold: number; up: boolean }[];
  answering: string | null;
  note: string;
}

const LIVE = 0;
const TENTATIVE = 1;
const DOWN = 2;
const ADMIN_OUT = 3;

/**
 * Per record, on its compiled health: the last health view seen and the outcome computed on it.
 * A property of the record's own object, not an entry of a module-wide WeakMap: V8 marks a
 * WeakMap's entries as ephemerons, in the collector's atomic pause, and with an entry per record
 * of two snapshots (a reload of 20,000 records) that work took 251 ms of a 303 ms full collection
 * (`--trace-gc-nvp`: `mark.ephemeron.marking`; issue 17, the reload row of docs/BENCHMARKS.md).
 */
const MEMO = Symbol('gate outcome');
/** On a gate stage: the record health it was built over, so {@link recordHealthOf} finds it (a property, as {@link MEMO}). */
const HEALTH = Symbol('gate health');

interface Memoised {
  [MEMO]?: { view: HealthView; outcome: GateOutcome };
}

/** The compiled health of a record whose pipeline holds a health gate (from `healthGateStage`); undefined for other stages. */
export function recordHealthOf(stage: Stage): CompiledRecordHealth | undefined {
  return (stage as { [HEALTH]?: CompiledRecordHealth })[HEALTH];
}

/**
 * The gate's availability verdict for a record on `view` at `nowMs`, as queries see it (the same
 * memo: a query after this call reuses the outcome). For what watches health outside the query
 * path (the fail-safe watch).
 */
export function gateAvailability(health: CompiledRecordHealth, view: HealthView, nowMs: number): RecordAvailability {
  return gateOutcome(health, view, nowMs);
}

/** The memoised outcome of a record on a view (one per record and view, and cold-start window). */
function gateOutcome(health: CompiledRecordHealth, view: HealthView, nowMs: number): GateOutcome {
  const memoised = health as CompiledRecordHealth & Memoised;
  const m = memoised[MEMO];
  if (m && m.view === view && (m.outcome.validUntilMs === Infinity || nowMs < m.outcome.validUntilMs)) return m.outcome;
  const outcome = evaluate(health, view, nowMs, undefined);
  // Shared by every query on this view: frozen, so a stage sorting it in place fails loudly.
  Object.freeze(outcome.live);
  memoised[MEMO] = { view, outcome };
  return outcome;
}

/**
 * `gate` (health, tiers, all-down fail-open, local-first): keeps the endpoints that may answer
 * and narrows the candidates to one tier (src/capabilities/health/README.md).
 *
 * An endpoint answers when forced up, or when not forced down or drained, its data center is not
 * down, and its monitors say up — or unknown: unknown counts as up, except that a record with a
 * cold-start wait leaves unknown endpoints out while another endpoint with a result is up, for at
 * most the wait. The first tier whose up fraction (by endpoint weight) reaches its threshold
 * answers; when none does, the first tier with any endpoint up answers with those (never with the
 * down ones); when no endpoint is up anywhere the record is all down and `fail-open` answers the
 * first tier's endpoints as if up (never a mix of tiers), while `fail-closed` and `failsafe` leave
 * nothing for the fallback stage. Health never depends on the client, so the ECS scope is
 * untouched; the outcome is computed once per record and health view (and cold-start window).
 */
export function healthGateStage(health: CompiledRecordHealth): Stage {
  const stage: Stage & { readonly [HEALTH]: CompiledRecordHealth } = {
    [HEALTH]: health,
    slot: 'gate',
    name: 'health',
    cacheable: true,
    run(s) {
      const view = s.env.health;
      let outcome: GateOutcome;
      if (s.trace) {
        const detail: GateDetail = { out: [], unknown: [], waiting: [], tiers: [], answering: null, note: '' };
        outcome = evaluate(health, view, selectionNow(s), detail);
        s.trace.step('health', { ...detail, liveDcs: outcome.live.map((l) => l.candidate.dc.name) });
      } else {
        outcome = gateOutcome(health, view, selectionNow(s));
      }
      s.live = outcome.live;
      s.availability = outcome;
      if (outcome.validUntilMs !== Infinity) s.varies = 'a cold-start wait is running (the outcome changes with time)';
    },
  };
  return stage;
}

/**
 * The gate's decision for a record on a health view at `nowMs` (pure; `detail` collects the
 * trace when given).
 */
function evaluate(h: CompiledRecordHealth, view: HealthView, nowMs: number, detail: GateDetail | undefined): GateOutcome {
  const classes = new Map<GslbEndpoint, number>();
  let anyDown = false;
  let anyKnownLive = false;
  let validUntilMs = Infinity;
  for (const tier of h.tiers) {
    for (const m of tier.members) {
      const hostDown = view.hostStatus(m.candidate.dc.name) === 'down';
      for (const e of m.endpoints) {
        const eh = view.endpointHealth(e.key);
        let c: number;
        let reason: OutReason | undefined;
        if (eh.override === 'force-up') c = LIVE;
        else if (eh.override === 'force-down') {
          c = ADMIN_OUT;
          reason = 'forced down';
        } else if (eh.override === 'drain') {
          c = ADMIN_OUT;
          reason = 'drained';
        } else if (hostDown) {
          c = DOWN;
          reason = 'data center down';
        } else if (eh.status === 'up') c = LIVE;
        else if (eh.status === 'down') {
          c = DOWN;
          reason = 'down';
        } else if (h.coldStartWaitMs > 0 && nowMs - eh.sinceMs < h.coldStartWaitMs) {
          c = TENTATIVE;
          validUntilMs = Math.min(validUntilMs, eh.sinceMs + h.coldStartWaitMs);
        } else {
          c = LIVE;
          detail?.unknown.push(e.key);
        }
        if (c === LIVE && eh.status !== 'unknown') anyKnownLive = true;
        if (c >= DOWN) anyDown = true;
        if (reason) detail?.out.push({ endpoint: e.key, reason });
        classes.set(e, c);
      }
    }
  }
  // Cold start: unknown endpoints wait only while something with a result can answer instead.
  const tentativeAnswers = !anyKnownLive;
  if (detail) {
    for (const [e, c] of classes) {
      if (c !== TENTATIVE) continue;
      if (tentativeAnswers) detail.unknown.push(e.key);
      else detail.waiting.push(e.key);
    }
  }
  const answers = (e: GslbEndpoint): boolean => {
    const c = classes.get(e)!;
    return c === LIVE || (c === TENTATIVE && tentativeAnswers);
  };

  let chosen: CompiledTier | undefined;
  let degraded: CompiledTier | undefined;
  for (const tier of h.tiers) {
    let up = 0;
    let total = 0;
    let upCount = 0;
    let count = 0;
    for (const m of tier.members) {
      for (const e of m.endpoints) {
        total += e.weight;
        count++;
        if (answers(e)) {
          up += e.weight;
          upCount++;
        }
      }
    }
    const fraction = total > 0 ? up / total : upCount / count;
    const isUp = upCount > 0 && fraction >= tier.threshold;
    detail?.tiers.push({ tier: tier.label, upWeight: total > 0 ? up : upCount, totalWeight: total > 0 ? total : count, threshold: tier.threshold, up: isUp });
    if (isUp) {
      chosen = tier;
      break;
    }
    if (upCount > 0) degraded ??= tier;
  }

  const answering = chosen ?? degraded;
  if (answering) {
    const live: LiveDc[] = [];
    for (const m of answering.members) {
      const endpoints = m.endpoints.filter(answers);
      if (endpoints.length > 0) live.push(endpoints.length === m.endpoints.length ? m : { candidate: m.candidate, endpoints });
    }
    if (detail) {
      detail.answering = answering.label;
      const notes: string[] = [];
      if (h.localSite !== undefined && !answering.local) notes.push('local site down, answering peer');
      if (!chosen) notes.push('every tier below its threshold; answering the live endpoints of the first tier that has any');
      detail.note = notes.join('; ');
    }
    return { live, anyDown, allDown: false, validUntilMs };
  }

  const first = h.tiers[0];
  if (h.allDown === 'fail-open' && first) {
    const live: LiveDc[] = [];
    for (const m of first.members) {
      const endpoints = m.endpoints.filter((e) => classes.get(e) !== ADMIN_OUT);
      if (endpoints.length > 0) live.push(endpoints.length === m.endpoints.length ? m : { candidate: m.candidate, endpoints });
    }
    if (detail) {
      detail.answering = first.label;
      detail.note = `all down: fail-open answers ${first.label} as if up`;
    }
    return { live, anyDown, allDown: true, validUntilMs };
  }
  if (detail) detail.note = `all down: ${h.allDown} (fallback stage answers)`;
  return { live: [], anyDown, allDown: true, validUntilMs };
}
