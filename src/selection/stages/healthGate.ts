import type { GslbEndpoint, LiveDc, Stage } from '../types.js';

/**
 * `gate` (health): drops endpoints the health view reports down, and data centers left with no
 * endpoint. Health never depends on the client, so the ECS scope is untouched.
 */
export const healthGateStage: Stage = {
  slot: 'gate',
  name: 'health',
  run(s) {
    const health = s.env.health;
    const kept: LiveDc[] = [];
    const down: string[] | undefined = s.trace ? [] : undefined;
    for (const l of s.live) {
      let up: GslbEndpoint[] | undefined;
      for (let i = 0; i < l.endpoints.length; i++) {
        const e = l.endpoints[i]!;
        if (health.endpointUp(e)) {
          if (up) up.push(e);
        } else {
          up ??= l.endpoints.slice(0, i);
          down?.push(e.key);
        }
      }
      const endpoints = up ?? l.endpoints;
      if (endpoints.length > 0) kept.push(up ? { candidate: l.candidate, endpoints } : l);
    }
    s.live = kept;
    if (s.trace) s.trace.step('health', { down, liveDcs: kept.map((l) => l.candidate.dc.name) });
  },
};
