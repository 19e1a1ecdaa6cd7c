import type { CompiledGslbRecord, LiveDc, Stage } from './stage.js';

/** Each record's candidates as live data centers, built once per record and shared (frozen) by every query. */
const liveByRecord = new WeakMap<CompiledGslbRecord, LiveDc[]>();

/** `candidates`: every data center with an enabled endpoint of the record's type, all endpoints live. */
export const candidatesStage: Stage = {
  slot: 'candidates',
  name: 'candidates',
  cacheable: true,
  run(s) {
    let live = liveByRecord.get(s.record);
    if (!live) {
      live = Object.freeze(s.record.candidates.map((candidate) => ({ candidate, endpoints: candidate.endpoints }))) as LiveDc[];
      liveByRecord.set(s.record, live);
    }
    s.live = live;
    if (s.trace) s.trace.step('candidates', { dcs: s.live.map((l) => l.candidate.dc.name) });
  },
};
