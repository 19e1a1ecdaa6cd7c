import type { Answer } from '../../core/model/query.js';
import type { ReplayedAnswer } from '../../core/telemetry/engineMetrics.js';

/** Answer classes the native addon counts (`kMaxClasses` in `native/fast_path.cc`). */
export const MAX_ANSWER_CLASSES = 1024 * 1024;

/** One answer class: what a replayed answer adds to the query counters. */
export interface AnswerClass {
  /** The question's type (numeric). */
  readonly type: number;
  readonly answer: ReplayedAnswer;
}

/**
 * The answer classes of one listener's fast path (src/doors/dns/README.md, "Fast path"): each
 * template is installed with the id of its class — the question type, rcode, zone, data centers
 * and GSLB records of its answer, the fields the query counters read — and the native threads
 * count their replays per class id, so `/metrics` can add a replayed answer wherever JavaScript
 * would have counted it. Classes are bounded by the configuration (zones × records × data-center
 * sets × types), and ids by {@link MAX_ANSWER_CLASSES}; they are never forgotten, since the native
 * counts stay indexed by them.
 */
export class AnswerClasses {
  private readonly ids = new Map<string, number>();
  /** The classes by id. */
  readonly list: AnswerClass[] = [];

  /** The id of the class of `answer` to a question of `type`, added when new; −1 when the table is full (the reply is then not kept as a template). */
  idOf(type: number, answer: Answer): number {
    const key = JSON.stringify([
      type,
      answer.rcode,
      answer.zone ?? null,
      answer.dcs,
      answer.selected ? [answer.selected, ...(answer.moreSelected ?? [])].map((r) => [r.name, r.type]) : null,
    ]);
    let id = this.ids.get(key);
    if (id === undefined) {
      if (this.list.length >= MAX_ANSWER_CLASSES) return -1;
      id = this.list.length;
      this.ids.set(key, id);
      this.list.push({
        type,
        answer: {
          rcode: answer.rcode,
          zone: answer.zone,
          dcs: [...answer.dcs],
          selected: answer.selected && { ...answer.selected },
          moreSelected: answer.moreSelected?.map((r) => ({ ...r })),
        },
      });
    }
    return id;
  }
}
