import type { LiveDc, Stage } from '../types.js';

/**
 * `pick`: takes the best `count` data centers (pickDcCount, SPEC §3) in rank order. A rank group
 * that straddles the cut is split by rotation (a counter per record in the rotation store), so
 * tied data centers share the load over successive queries; fewer available means all of them,
 * and no data center is ever invented.
 */
export function pickDcsStage(count: number, rotationKey: string): Stage {
  return {
    slot: 'pick',
    name: 'pick-dcs',
    run(s) {
      const picked: LiveDc[] = [];
      let split: { group: string[]; start: number } | undefined;
      for (const group of s.ranked) {
        const room = count - picked.length;
        if (group.length <= room) {
          picked.push(...group);
        } else {
          const start = s.env.ctx.rotation.next(rotationKey) % group.length;
          for (let i = 0; i < room; i++) picked.push(group[(start + i) % group.length]!);
          if (s.trace) split = { group: group.map((l) => l.candidate.dc.name), start };
        }
        if (picked.length >= count) break;
      }
      s.picked = picked;
      if (s.trace) s.trace.step('pick-dcs', { pickDcCount: count, picked: picked.map((l) => l.candidate.dc.name), tieSplitByRotation: split ?? null });
    },
  };
}
