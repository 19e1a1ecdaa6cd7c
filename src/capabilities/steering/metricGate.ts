import { evaluateGate, triName, TRUE, UNKNOWN, type Gate } from './gateExpression.js';
import { selectionNow, type LiveDc, type Stage } from '../../pipeline/selection/stage.js';

/**
 * `gate` (metrics): keeps the live data centers whose gate expression holds (docs/PRODUCT.md §3 "gating",
 * e.g. `host.status == up && host.cpu < 90`), evaluated before the ranking criterion. A gate
 * that comes out unknown (a metric missing or stale) follows the record's `unknown` rule:
 * `exclude` gates the data center out, `rank-last` keeps it in `s.demoted`, behind every data
 * center whose gate held. Host and service metrics do not depend on the client, so the ECS
 * scope is untouched.
 */
export function metricGateStage(gate: Gate, service: string, unknown: 'rank-last' | 'exclude'): Stage {
  return {
    slot: 'gate',
    name: 'metric-gate',
    cacheable: 'it reads live host and service metrics',
    run(s) {
      if (s.live.length === 0) return;
      const now = selectionNow(s);
      const view = s.env.metrics;
      let kept: LiveDc[] | undefined;
      let demoted: LiveDc[] | undefined;
      const results: number[] | undefined = s.trace ? [] : undefined;
      for (let i = 0; i < s.live.length; i++) {
        const l = s.live[i]!;
        const r = evaluateGate(gate, view, service, l.candidate.dc.name, now);
        results?.push(r);
        if (r === TRUE) {
          kept?.push(l);
          continue;
        }
        kept ??= s.live.slice(0, i);
        if (r === UNKNOWN && unknown === 'rank-last') (demoted ??= []).push(l);
      }
      if (s.trace) {
        s.trace.step('metric-gate', {
          gate: gate.text,
          unknown,
          dcs: s.live.map((l, i) => {
            const r = results![i]! as 0 | 1 | 2;
            const dc = l.candidate.dc.name;
            return {
              dc,
              gate: triName(r),
              outcome: r === TRUE ? 'kept' : r === UNKNOWN && unknown === 'rank-last' ? 'kept, ranked last' : 'gated out',
              metrics: Object.fromEntries(gate.metrics.map((m) => [m.name, view.describe(m.source, m.source === 'host' ? '' : service, dc, m.id, now)])),
            };
          }),
        });
      }
      if (kept) s.live = kept;
      if (demoted) s.demoted = demoted;
    },
  };
}
