import { clientNetworkPrefix, clientTieBreakHash, rendezvousChoose } from './tieBreakHash.js';
import { narrowScope, type CompiledGslbRecord, type LiveDc, type SelectionState, type Stage } from './stage.js';

/** How the pick stage splits a rank group that straddles the pickDcCount cut. */
export interface TieBreak {
  /** Shown in the /explain trace. */
  readonly name: string;
  /** The `room` members of `group` that go into the answer, in answer order. */
  choose(group: readonly LiveDc[], room: number, s: SelectionState): LiveDc[];
}

/** On a compiled record: its pick rotation key, built on the record's first tie (most records never have one). */
const PICK_ROTATION_KEY = Symbol('pick rotation key');

/**
 * Split by rotation (static proximity): a counter per record in the rotation store (key
 * `<record name>/<type>/pick`) picks where in the group to start, so tied data centers share the
 * load over successive queries; the answer does not depend on the client, so the ECS scope is
 * untouched. One object for every record: the key is the record's (issue 17: a tie-break, its
 * closure and its key string per record were 80,000 objects of a 20,000-record snapshot).
 */
export const rotationTieBreak: TieBreak = {
  name: 'rotation',
  choose(group, room, s) {
    s.varies = 'a tie at the pickDcCount cut split by rotation';
    const record = s.record as CompiledGslbRecord & { [PICK_ROTATION_KEY]?: string };
    const key = (record[PICK_ROTATION_KEY] ??= `${record.name}/${record.type}/pick`);
    const start = s.env.ctx.rotation.next(key) % group.length;
    const out: LiveDc[] = [];
    for (let i = 0; i < room; i++) out.push(group[(start + i) % group.length]!);
    return out;
  },
};

/**
 * Split by data center weight (the record's `dcWeights`, as gdnsd `weighted`, PowerDNS LUA
 * `pickwrandom` or Cloudflare pool weights): the `room` members are drawn by weighted random
 * without replacement, a data center's chance proportional to its weight (1 when not listed); a
 * weight of 0 is a last resort, drawn only when the positive ones cannot fill the room (as for
 * endpoints, `weightPool.ts`). Every query draws afresh (`varies`: the decision cache keeps the
 * ranking, never a draw); the answer does not depend on the client, so the ECS scope is the
 * ranking's.
 */
export function weightedTieBreak(weights: Readonly<Record<string, number>>): TieBreak {
  return {
    name: 'data center weight',
    choose(group, room, s) {
      s.varies = 'a tie at the pickDcCount cut drawn by data center weight';
      const pool = group.map((l) => ({ l, weight: weights[l.candidate.dc.name] ?? 1 }));
      const out: LiveDc[] = [];
      while (out.length < room && pool.length > 0) {
        const positive = pool.filter((p) => p.weight > 0);
        // Only zero weights left: they share the rest equally.
        const from = positive.length > 0 ? positive : pool.map((p) => ({ ...p, weight: 1 }));
        let r = s.env.ctx.random() * from.reduce((sum, p) => sum + p.weight, 0);
        let i = 0;
        for (; i < from.length - 1; i++) {
          r -= from[i]!.weight;
          if (r < 0) break;
        }
        const drawn = from[i]!.l;
        out.push(drawn);
        pool.splice(
          pool.findIndex((p) => p.l === drawn),
          1,
        );
      }
      return out;
    },
  };
}

/**
 * Split by the client tie-break hash (multi-source, tieBreakHash.ts): the same client network
 * always gets the same data centers of a tied group, on every replica and across restarts. The
 * answer then depends on the client network, so the ECS scope narrows to its length.
 */
export const clientHashTieBreak: TieBreak = {
  name: 'client-network hash',
  choose(group, room, s) {
    s.varies = 'a tie at the pickDcCount cut split by the client-network hash';
    narrowScope(s, clientNetworkPrefix(s));
    return rendezvousChoose(group, room, clientTieBreakHash(s), (l) => l.candidate.dc.name);
  },
};

/**
 * `pick`: takes the best `count` data centers (pickDcCount, docs/PRODUCT.md §3) in rank order. A rank group
 * that straddles the cut is split by `tieBreak`; fewer available means all of them, and no data
 * center is ever invented. The trace lists every ranked data center with why it was or was
 * not picked.
 */
export function pickDcsStage(count: number, tieBreak: TieBreak): Stage {
  return {
    slot: 'pick',
    name: 'pick-dcs',
    cacheable: true,
    run(s) {
      const ranked = s.ranked;
      // The best group alone fills the answer (or is all there is): it is the pick, shared as it is.
      const first = ranked[0];
      if (first !== undefined && (first.length === count || (first.length < count && ranked.length === 1))) {
        s.picked = first;
        if (s.trace) trace(s, count, tieBreak, first, undefined);
        return;
      }
      const picked: LiveDc[] = [];
      let split: { group: string[]; chosen: string[] } | undefined;
      for (const group of ranked) {
        const room = count - picked.length;
        if (group.length <= room) {
          for (let i = 0; i < group.length; i++) picked.push(group[i]!);
        } else {
          const chosen = tieBreak.choose(group, room, s);
          picked.push(...chosen);
          if (s.trace) split = { group: group.map((l) => l.candidate.dc.name), chosen: chosen.map((l) => l.candidate.dc.name) };
        }
        if (picked.length >= count) break;
      }
      s.picked = picked;
      if (s.trace) trace(s, count, tieBreak, picked, split);
    },
  };
}

function trace(
  s: SelectionState,
  count: number,
  tieBreak: TieBreak,
  picked: readonly LiveDc[],
  split: { group: string[]; chosen: string[] } | undefined,
): void {
  s.trace!.step('pick-dcs', {
    pickDcCount: count,
    tieBreak: tieBreak.name,
    picked: picked.map((l) => l.candidate.dc.name),
    tieSplit: split ?? null,
    dcs: s.ranked.flatMap((group, rank) =>
      group.map((l) => ({ dc: l.candidate.dc.name, rankGroup: rank, picked: picked.includes(l), why: whyPicked(l, picked, split, count) })),
    ),
  });
}

function whyPicked(l: LiveDc, picked: readonly LiveDc[], split: { group: string[]; chosen: string[] } | undefined, count: number): string {
  const name = l.candidate.dc.name;
  if (split?.group.includes(name))
    return split.chosen.includes(name) ? 'won the tie-break at the pickDcCount cut' : 'lost the tie-break at the pickDcCount cut';
  return picked.includes(l) ? `rank group within the best ${count}` : 'ranked below the pickDcCount cut';
}
