import type { LiveDc, Stage } from './stage.js';

/** `candidates`: every data center with an enabled endpoint of the record's type, all endpoints live. */
export const candidatesStage: Stage = {
  slot: 'candidates',
  name: 'candidates',
  cacheable: true,
  run(s) {
    // Frozen and shared: a stage that sorts it in place fails loudly.
    s.live = s.record.allLive as LiveDc[];
    if (s.trace) s.trace.step('candidates', { dcs: s.live.map((l) => l.candidate.dc.name) });
  },
};
