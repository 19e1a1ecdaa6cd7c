import { performance } from 'node:perf_hooks';
import type { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import type { Engine } from '../../pipeline/engine.js';
import { ipv4 } from '../../core/net/ipAddress.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { RCODE } from '../../core/dns/rcode.js';
import { clientFor, readEcs, replyScope, type EcsSubnet } from '../../core/wire/ecsOption.js';
import { metaQtypeRcode } from '../../core/wire/metaQtype.js';
import type { AnswerFrame, CompactQuery } from './frameCodec.js';

/** What answering a compact QUERY needs from the process. */
export interface CompactAnswerDeps {
  readonly engine: Engine;
  readonly metrics: EngineMetrics;
  readonly log: Logger;
}

/** Answers one decoded QUERY; see {@link compactAnswerer}. */
export type CompactAnswerer = (q: CompactQuery) => AnswerFrame;

const CLASS_IN = 1;
/** Stand-in resolver address when the shim could not tell one (source family 0): location unknown. */
const UNKNOWN_SOURCE = ipv4(0);
const EMPTY: AnswerFrame['answers'] = [];

/** Every this many queries one resolve() is timed for `gslbd_resolve_duration_seconds`. */
const TIMING_SAMPLE = 16;

/**
 * Returns the function that answers compact QUERYs (docs/protocol.md, QUERY and ANSWER) with the
 * same rules as the standalone listener: the client is the ECS address when the source prefix is
 * > 0, else the resolver's; malformed ECS is FORMERR (RFC 7871 §7.1.1); a class other than IN is
 * REFUSED; zone transfers and other meta-QTYPEs get the listener's error code ({@link metaQtypeRcode}). The ECS scope to echo is computed here (RFC 7871 §7.2.1, SPEC §8), so a shim only
 * copies it. The answerer never throws: a failure inside the engine is answered SERVFAIL and
 * logged. The per-query cost is kept down: queries and data-center answers are counted in plain
 * numbers that reach Prometheus at scrape time (`EngineMetrics.countQuery`, `countDc`), and
 * every 16th resolve() is timed for the duration histogram (timing them all cost as much as a
 * tenth of a query's CPU).
 */
export function compactAnswerer(deps: CompactAnswerDeps): CompactAnswerer {
  const countRcode = (a: AnswerFrame): AnswerFrame => {
    deps.metrics.countQuery('compact', a.rcode);
    return a;
  };
  let queries = 0;

  return (q) => {
    let ecs: EcsSubnet | undefined;
    if (q.ecs) {
      const parsed = readEcs(q.ecs, 0, q.ecs.length);
      if (typeof parsed === 'string') {
        deps.metrics.malformed.inc({ transport: 'compact', outcome: 'FORMERR' });
        return countRcode(negative(RCODE.FORMERR, false));
      }
      ecs = parsed;
    }
    if (q.qclass !== CLASS_IN) return countRcode(negative(RCODE.REFUSED, true));
    const metaRcode = metaQtypeRcode(q.qtype);
    if (metaRcode !== undefined) return countRcode(negative(metaRcode, false));
    const client = clientFor(ecs, q.source ?? UNKNOWN_SOURCE);
    const started = (queries++ & (TIMING_SAMPLE - 1)) === 0 ? performance.now() : -1;
    try {
      const a = deps.engine.resolve({ name: q.qname, type: q.qtype, client, transport: q.transport === 0 ? 'udp' : 'tcp' });
      if (started >= 0) deps.metrics.resolveTimes.observe((performance.now() - started) / 1000);
      for (const dc of a.dcs) deps.metrics.countDc(dc);
      return countRcode({
        rcode: a.rcode,
        authoritative: a.authoritative,
        notOurs: a.rcode === RCODE.REFUSED,
        ecsScope: ecs ? replyScope(ecs, a.scope) : 0,
        clientScope: a.scope,
        answers: a.answers,
        authority: a.authority,
        additional: a.additional,
      });
    } catch (e) {
      deps.log.error({ err: e, qname: q.qname, qtype: q.qtype, component: 'compact' }, 'resolve failed; answering SERVFAIL');
      return countRcode(negative(RCODE.SERVFAIL, false));
    }
  };
}

function negative(rcode: number, notOurs: boolean): AnswerFrame {
  return { rcode, authoritative: false, notOurs, ecsScope: 0, clientScope: 0, answers: EMPTY, authority: EMPTY, additional: EMPTY };
}
