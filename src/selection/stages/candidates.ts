import type { Stage } from '../types.js';

/** `candidates`: every data center with an enabled endpoint of the record's type, all endpoints live. */
export const candidatesStage: Stage = {
  slot: 'candidates',
  name: 'candidates',
  run(s) {
    s.live = s.record.candidates.map((candidate) => ({ candidate, endpoints: candidate.endpoints }));
    if (s.trace) s.trace.step('candidates', { dcs: s.live.map((l) => l.candidate.dc.name) });
  },
};
