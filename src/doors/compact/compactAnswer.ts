import { RCODE } from '../../core/dns/rcode.js';
import { ipv4 } from '../../core/net/ipAddress.js';
import type { Answer } from '../../core/model/query.js';
import { readEcs, replyScope, type EcsSubnet } from '../../core/wire/ecsOption.js';
import { AnswerWrapper, type AnswerForm, type AnswerWrapperDeps } from '../answerWrapper.js';
import type { AnswerFrame, CompactQuery } from './frameCodec.js';

/** What answering a compact QUERY needs from the process. */
export type CompactAnswerDeps = AnswerWrapperDeps;

/**
 * Answers one decoded QUERY; see {@link compactAnswerer}. A promise only when the engine answered
 * with one.
 */
export type CompactAnswerer = (q: CompactQuery) => AnswerFrame | Promise<AnswerFrame>;

const CLASS_IN = 1;
/** Stand-in resolver address when the shim could not tell one (source family 0): location unknown. */
const UNKNOWN_SOURCE = ipv4(0);
const EMPTY: AnswerFrame['answers'] = [];
/** Our `transport` label of `gslbd_dns_queries_total` and `gslbd_dns_malformed_total`. */
const LABEL = 'compact';

/**
 * ANSWER frames from the engine's answers, with the ECS scope to echo computed here
 * (RFC 7871 §7.2.1), so a shim only copies it.
 */
const FRAMES: AnswerForm<EcsSubnet | undefined, AnswerFrame> = {
  answer(ecs: EcsSubnet | undefined, a: Answer): AnswerFrame {
    return {
      rcode: a.rcode,
      authoritative: a.authoritative,
      notOurs: a.rcode === RCODE.REFUSED,
      ecsScope: ecs ? replyScope(ecs, a.scope) : 0,
      clientScope: a.scope,
      answers: a.answers,
      authority: a.authority,
      additional: a.additional,
    };
  },
  error(_ecs: EcsSubnet | undefined, rcode: number): AnswerFrame {
    return negative(rcode, false);
  },
};

/**
 * Returns the function that answers compact QUERYs (docs/protocol.md, QUERY and ANSWER) with the
 * same rules as the standalone listener, through the shared answer wrapper
 * (`src/doors/answerWrapper.ts`): the client is the ECS address when the source prefix is > 0,
 * else the resolver's; zone transfers and other meta-QTYPEs get the listener's error code; a
 * failure inside the engine is answered SERVFAIL and logged; one resolve() in 16 is timed.
 * Before it, this door's own checks: malformed ECS is FORMERR (RFC 7871 §7.1.1) and a class
 * other than IN is REFUSED. The per-query cost is kept down: queries and data-center answers are
 * counted in plain numbers that reach Prometheus at scrape time (`EngineMetrics.countQuery`,
 * `countDc`).
 */
export function compactAnswerer(deps: CompactAnswerDeps): CompactAnswerer {
  const answers = new AnswerWrapper(deps, { label: LABEL, component: 'compact' });
  return (q) => {
    let ecs: EcsSubnet | undefined;
    if (q.ecs) {
      const parsed = readEcs(q.ecs, 0, q.ecs.length);
      if (typeof parsed === 'string') {
        deps.metrics.malformed.inc({ transport: LABEL, outcome: 'FORMERR' });
        answers.countReply(LABEL, RCODE.FORMERR);
        return negative(RCODE.FORMERR, false);
      }
      ecs = parsed;
    }
    if (q.qclass !== CLASS_IN) {
      answers.countReply(LABEL, RCODE.REFUSED);
      return negative(RCODE.REFUSED, true);
    }
    return answers.answer(FRAMES, ecs, q.qname, q.qtype, q.transport === 0 ? 'udp' : 'tcp', ecs, q.source ?? UNKNOWN_SOURCE);
  };
}

function negative(rcode: number, notOurs: boolean): AnswerFrame {
  return { rcode, authoritative: false, notOurs, ecsScope: 0, clientScope: 0, answers: EMPTY, authority: EMPTY, additional: EMPTY };
}
