import type { Stage } from '../types.js';

/**
 * `fallback`: when selection produced no data, answers the record's fail-safe list with its TTL
 * (SPEC §3); without a list, every enabled endpoint of the record (fail-open), so a GSLB name
 * never turns into NXDOMAIN or an empty answer. The health issue makes the all-down behaviour
 * configurable per record.
 */
export const failsafeStage: Stage = {
  slot: 'fallback',
  name: 'failsafe',
  run(s) {
    if (s.data.length > 0) return;
    const r = s.record;
    if (r.failsafe.length > 0) {
      s.data.push(...r.failsafe);
      s.ttl = r.failsafeTtl;
    } else {
      for (const c of r.candidates) for (const e of c.endpoints) s.data.push(e.data);
      s.ttl = r.ttl;
    }
    if (s.trace) s.trace.step('failsafe', { used: r.failsafe.length > 0 ? 'fail-safe list' : 'all enabled endpoints (fail-open)' });
  },
};
