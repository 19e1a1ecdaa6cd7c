import { RCODE_NAMES } from '../../core/dns/rcode.js';
import { typeName } from '../../core/dns/records.js';
import { formatIp, maskAddress, type IpAddress } from '../../core/net/ipAddress.js';
import type { Answer, Query } from '../../core/model/query.js';
import type { ClassRangeSource } from '../../core/lpm/rangeTable.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { decodeQuery, type WireQuestion } from '../../core/wire/wireQuery.js';
import { caseNeutralOwners, encodeReply, type ReplyHeader } from '../../core/wire/wireResponse.js';
import { AnswerWrapper, type AnswerForm, type AnswerWrapperDeps } from '../answerWrapper.js';
import type { DnsBehaviourConfig } from './listenerSchema.js';

/** What the DNS front door needs from the process. */
export interface DnsFrontDoorDeps extends AnswerWrapperDeps {
  readonly behaviour: DnsBehaviourConfig;
}

/** Largest DNS message over UDP without EDNS (RFC 1035 §4.2.1). */
const CLASSIC_UDP_LIMIT = 512;

/** One question's reply header, with what writing and logging its reply needs. */
interface DnsReplyContext extends ReplyHeader {
  readonly question: WireQuestion;
  /** Largest reply the transport carries (bytes). */
  readonly limit: number;
  /** The resolver's address (for the query log). */
  readonly peer: IpAddress;
  /** Where {@link MessageHandler.answer} says whether the reply may be replayed (the fast path's question). */
  readonly reuse: ReplyReuse | undefined;
  /** Logged whatever the sample draw: a fast-path hit its thread sampled for the query log. */
  readonly sampled: boolean;
}

/** Whether a reply may be replayed for other queries: see {@link MessageHandler.handle}. */
export interface ReplyReuse {
  /** −1: not reusable; else the prefix length of the client block the reply holds for. */
  scope: number;
  /** When reusable: the answer, whose counts (rcode, zone, data centers, records) a replay adds to the query counters. */
  answer: Answer | undefined;
  /** When reusable: the question's type (numeric), for `gslbd_dns_queries_by_qtype_total`. */
  type: number;
  /**
   * When reusable by class too (`Answer.reuseClass`): the class table every client of whose class
   * {@link classId} (and of this client's address family) gets this reply, with its own ECS scope;
   * else undefined.
   */
  classTable: ClassRangeSource | undefined;
  /** With {@link classTable}: the client's class id in it. */
  classId: number;
}

/**
 * Turns DNS messages into replies for one standalone listener (all its UDP and TCP sockets),
 * through the shared answer wrapper (`src/doors/answerWrapper.ts`: client from ECS or the
 * resolver, meta-QTYPEs, SERVFAIL on an internal error, counters, timing one query in 16).
 */
export class MessageHandler implements AnswerForm<DnsReplyContext, Buffer> {
  private readonly answers: AnswerWrapper;

  constructor(private deps: DnsFrontDoorDeps) {
    this.answers = new AnswerWrapper(deps);
  }

  /** Answers every later message with `behaviour` (a reload's `dns` settings: payload size, query-log sampling). */
  reconfigure(behaviour: DnsBehaviourConfig): void {
    this.deps = { ...this.deps, behaviour };
  }

  /**
   * The reply to one DNS message, or null when it must be dropped; a promise only when the
   * engine answered with one. Never throws for a failure inside the engine: that is SERVFAIL.
   *
   * The client is the ECS address when the query carries ECS with a source prefix > 0, else the
   * peer (the resolver); IPv4-mapped IPv6 counts as IPv4. Zone transfers and other meta-QTYPEs
   * get an error code without reaching the engine.
   *
   * With `reuse`, its `scope` is set to the answer's `reuseScope` (0 when the answer does not
   * depend on the client) when the reply is an engine answer that the same query from any client
   * of that block gets too, until the next publish; it stays as given (−1) for error replies,
   * asynchronous answers and answers an after-answer hook may change (DNSSEC signing with DO, the
   * apex key sets: `AfterAnswerHook.leavesUnchanged`) and for answers with a name in the query's
   * letter case other than the question's (`caseNeutralOwners`: replays serve every case). A
   * caller that replays replies samples the replayed queries for the query log itself and hands
   * those over with `sampled` (logged here without a draw), so `dns.queryLogSampleRate` holds over
   * all queries.
   */
  handle(msg: Buffer, transport: 'udp' | 'tcp', peer: IpAddress, reuse?: ReplyReuse, sampled = false): Buffer | null | Promise<Buffer> {
    const decoded = decodeQuery(msg);
    const { metrics, behaviour } = this.deps;
    const { udpPayloadSize } = behaviour;
    if (decoded.kind === 'drop') {
      metrics.malformed.inc({ transport, outcome: 'dropped' });
      return null;
    }
    if (decoded.kind === 'error') {
      metrics.malformed.inc({ transport, outcome: RCODE_NAMES[decoded.rcode] ?? String(decoded.rcode) });
      this.answers.countReply(transport, decoded.rcode);
      const header = { id: decoded.id, queryFlags: decoded.flags, question: decoded.question, edns: decoded.edns, udpPayloadSize };
      return encodeReply(header, { rcode: decoded.rcode, authoritative: false }, CLASSIC_UDP_LIMIT);
    }
    const q = decoded.query;
    const limit = transport === 'tcp' ? 65535 : q.edns ? Math.min(q.edns.udpSize, udpPayloadSize) : CLASSIC_UDP_LIMIT;
    const reply: DnsReplyContext = { id: q.id, queryFlags: q.flags, question: q.question, edns: q.edns, udpPayloadSize, limit, peer, reuse, sampled };
    return this.answers.answer(this, reply, q.question.name, q.question.type, transport, q.edns?.ecs, peer, q.edns?.dnssecOk ?? false, q.edns?.hop);
  }

  /** {@inheritDoc AnswerForm.answer}; logs the query when it is sampled (`dns.queryLogSampleRate`). */
  answer(reply: DnsReplyContext, answer: Answer, query: Query): Buffer {
    const rate = this.deps.behaviour.queryLogSampleRate;
    if (reply.sampled || (rate > 0 && this.deps.engine.ctx.random() < rate)) logQuery(this.deps.log, reply, query, answer);
    const reuse = reply.reuse;
    // The fast path replays a template for every letter case of the question: only a reply whose names follow the question's case.
    if (reuse !== undefined && this.hooksLeave(query) && caseNeutralOwners(answer, reply.question)) {
      reuse.scope = answer.reuseScope ?? 0;
      reuse.answer = answer;
      reuse.type = query.type;
      const classTable = answer.reuseClass;
      reuse.classTable = classTable !== null && classTable !== undefined && reuse.scope >= 0 ? classTable : undefined;
      reuse.classId = reuse.classTable !== undefined ? (answer.reuseClassId ?? -1) : -1;
    }
    return encodeReply(reply, answer, reply.limit);
  }

  /** Whether every after-answer hook passes this query's answer on untouched (`AfterAnswerHook.leavesUnchanged`). */
  private hooksLeave(query: Query): boolean {
    const hooks = this.deps.afterAnswer;
    if (hooks === undefined) return true;
    for (let i = 0; i < hooks.length; i++) if (hooks[i]!.leavesUnchanged?.(query) !== true) return false;
    return true;
  }

  /** {@inheritDoc AnswerForm.error}: a reply without records, AA clear. */
  error(reply: DnsReplyContext, rcode: number): Buffer {
    return encodeReply(reply, { rcode, authoritative: false }, reply.limit);
  }
}

/**
 * Logs one sampled query with client and resolver addresses truncated to /24 (IPv4) or /48
 * (IPv6), the type by name, the data centers the GSLB selections answered with, and `fastPath`
 * (`hit` or `miss`) when the native fast path received it.
 */
function logQuery(log: Logger, reply: DnsReplyContext, query: Query, a: Answer): void {
  const truncate = (ip: IpAddress): string => `${formatIp(maskAddress(ip, ip.family === 4 ? 24 : 48))}/${ip.family === 4 ? 24 : 48}`;
  log.info(
    {
      component: 'query-log',
      qname: reply.question.name,
      qtype: typeName(reply.question.type),
      transport: query.transport,
      client: truncate(query.client.address),
      resolver: truncate(reply.peer),
      ecs: query.client.fromEcs,
      rcode: RCODE_NAMES[a.rcode],
      scope: a.scope,
      answers: a.answers.length,
      dcs: a.dcs,
      // Through the native fast path: a template hit its thread sampled, or a datagram it handed over (no template).
      fastPath: reply.sampled ? 'hit' : reply.reuse !== undefined ? 'miss' : undefined,
    },
    'query',
  );
}
