import type { Stage } from '../../pipeline/selection/stage.js';
import type { CompiledRecordHealth } from './recordHealth.js';

/**
 * `fallback`: the all-down policy and the TTL rules (src/capabilities/health/README.md).
 *
 * With an answer: its one TTL (RFC 2181 §5.2: one TTL per RRset) is the record's TTL, lowered to
 * `downTtl` while any endpoint of the record is down. Without one (every endpoint down, or a
 * policy left nothing): `fail-closed` answers NODATA — empty data with the negative TTL, which
 * the zones layer sends as the SOA in the authority section (RFC 2308 §2.2); `failsafe` answers
 * the fail-safe list with its own TTL (docs/PRODUCT.md §3); `fail-open` answers the fail-safe list when there
 * is one, else the first tier's endpoints that are not forced down or drained, else NODATA. A GSLB
 * name never turns into NXDOMAIN or an empty NOERROR without SOA.
 */
export function failsafeStage(h: CompiledRecordHealth): Stage {
  return {
    slot: 'fallback',
    name: 'failsafe',
    cacheable: true,
    run(s) {
      const r = s.record;
      if (s.data.length > 0) {
        let ttl = Math.min(s.ttl, r.ttl);
        if (h.downTtl !== undefined && s.availability?.anyDown && h.downTtl < ttl) ttl = h.downTtl;
        s.ttl = ttl;
        if (s.trace && ttl !== r.ttl) s.trace.step('ttl', { ttl, rule: 'downTtl while an endpoint is down' });
        return;
      }
      let used = 'NODATA (SOA at the negative TTL)';
      if (h.allDown !== 'fail-closed' && r.failsafe.length > 0) {
        s.data.push(...r.failsafe);
        s.ttl = r.failsafeTtl;
        used = 'fail-safe list';
      } else if (h.allDown === 'fail-open' && h.tiers.length > 0) {
        const view = s.env.health;
        for (const m of h.tiers[0]!.members) {
          for (const e of m.endpoints) {
            const o = view.endpointHealth(e.key).override;
            if (o !== 'force-down' && o !== 'drain') s.data.push(e.data);
          }
        }
        s.ttl = Math.min(r.ttl, h.downTtl ?? r.ttl);
        used = `fail-open: ${h.tiers[0]!.label} endpoints`;
      }
      if (s.data.length === 0) s.ttl = h.negativeTtl;
      if (s.trace) s.trace.step('failsafe', { allDown: h.allDown, used: s.data.length > 0 ? used : 'NODATA (SOA at the negative TTL)', ttl: s.ttl });
    },
  };
}
