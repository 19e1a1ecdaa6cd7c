import { performance } from 'node:perf_hooks';
import { RCODE } from '../core/dns/rcode.js';
import type { AfterAnswerHook, FrontDoorHost } from '../core/contracts/frontDoor.js';
import type { IpAddress } from '../core/net/ipAddress.js';
import type { Answer, DelegationHop, Query, SelectedRecord } from '../core/model/query.js';
import { clientFor, type EcsSubnet } from '../core/wire/ecsOption.js';
import { metaQtypeRcode } from '../core/wire/metaQtype.js';

/**
 * The one timing-sample policy of every front door: one engine call in this many is timed
 * (the first, then every 16th). Timing each call cost as much as a tenth of a cheap query's CPU
 * (`src/doors/README.md`, "Timing"); one in 16 keeps the duration histograms representative.
 */
export const TIMING_SAMPLE = 16;

/**
 * How one door writes its replies. The wrapper calls exactly one method per question; neither
 * is called inside the wrapper's error handling, so an exception from them reaches the door.
 */
export interface AnswerForm<Q, R> {
  /** The reply to `q` carrying `answer` (after the after-answer hooks) for `query`. */
  answer(q: Q, answer: Answer, query: Query): R;
  /** The reply to `q` with `rcode` and no records: a meta-QTYPE's code, or SERVFAIL when the engine failed. */
  error(q: Q, rcode: number): R;
}

/** What the wrapper needs from the process: a {@link FrontDoorHost}'s engine, metrics and log, and its hooks. */
export interface AnswerWrapperDeps extends Pick<FrontDoorHost, 'engine' | 'metrics' | 'log'> {
  /** Run in order on every answer the engine built (none when absent). */
  readonly afterAnswer?: readonly AfterAnswerHook[];
}

/** How a door's answers are labelled in metrics and logs. */
export interface AnswerWrapperOptions {
  /** `transport` label of `gslbd_dns_queries_total`; the query's transport (`udp`, `tcp`) when absent. */
  readonly label?: string;
  /** `component` field of the failure log line (none when absent). */
  readonly component?: string;
}

const NO_HOOKS: readonly AfterAnswerHook[] = [];

/**
 * The rules every front door applies around the engine, in one place (one instance per door):
 *
 * - the client: the ECS address when the query carried ECS with a source prefix > 0, else the
 *   resolver's address ({@link clientFor}, RFC 7871 §7.1.1);
 * - meta-QTYPEs (zone transfers, TSIG, …) get their error code without reaching the engine
 *   ({@link metaQtypeRcode});
 * - an exception inside the engine or a hook is answered SERVFAIL (the door's error form), with
 *   one log line;
 * - `gslbd_dns_queries_total` by label and rcode, `gslbd_dns_queries_by_qtype_total` by query
 *   type, `gslbd_dc_answers_total` by data center, `gslbd_dns_queries_by_zone_total` by the
 *   answer's zone and `gslbd_gslb_record_selections_total` by the records selected (top N);
 * - one timing-sample policy ({@link TIMING_SAMPLE}) for `gslbd_resolve_duration_seconds`, and
 *   for doors that time something else ({@link startTiming}).
 *
 * The synchronous path allocates nothing beyond the query and the door's reply: no closure, no
 * promise. An engine that answers with a promise, or a hook that returns one, makes that one
 * reply a promise; the door sends it when it settles.
 *
 * The PowerDNS door asks for a name's RRsets rather than an answer (PowerDNS decides the rcode and
 * answers meta-QTYPEs itself), so it takes the timing policy, the data-center counts and the
 * failure log line from here, and the client rule through {@link clientFor}.
 */
export class AnswerWrapper {
  private calls = 0;
  private readonly hooks: readonly AfterAnswerHook[];
  private readonly label: string | undefined;
  private readonly component: string | undefined;

  constructor(
    private readonly deps: AnswerWrapperDeps,
    options: AnswerWrapperOptions = {},
  ) {
    this.hooks = deps.afterAnswer ?? NO_HOOKS;
    this.label = options.label;
    this.component = options.component;
  }

  /**
   * The reply to one question (`name` as received, numeric `type`): its error code for a
   * meta-QTYPE, else the engine's answer for the client of `ecs` and `resolver`, through the
   * after-answer hooks, written by `form`; SERVFAIL when the engine or a hook throws.
   * @param q the door's context for writing the reply (header, size limit, ECS option), handed to `form`.
   * @param dnssecOk the query's DO bit when the door's protocol carries one ({@link Query.dnssecOk}).
   * @param delegationHop the query's delegation hop option when the door's protocol carries EDNS options ({@link Query.delegationHop}).
   * @returns the reply; a promise only when the engine or a hook answered with one (it never rejects
   *   for an engine or hook failure, which is SERVFAIL).
   */
  answer<Q, R>(
    form: AnswerForm<Q, R>,
    q: Q,
    name: string,
    type: number,
    transport: 'udp' | 'tcp',
    ecs: EcsSubnet | undefined,
    resolver: IpAddress,
    dnssecOk?: boolean,
    delegationHop?: DelegationHop,
  ): R | Promise<R> {
    const label = this.label ?? transport;
    this.deps.metrics.countQtype(type);
    const metaRcode = metaQtypeRcode(type);
    if (metaRcode !== undefined) {
      this.deps.metrics.countQuery(label, metaRcode);
      return form.error(q, metaRcode);
    }
    // One object shape for every door: `dnssecOk` is present, undefined where the protocol has no DO bit.
    const query: Query = { name, type, client: clientFor(ecs, resolver), transport, dnssecOk, delegationHop };
    const started = this.startTiming();
    let answer: Answer | Promise<Answer>;
    try {
      answer = this.deps.engine.resolve(query);
      if (answer instanceof Promise) return this.settle(form, q, query, label, answer, started, true);
      if (started >= 0) this.observe(started);
      if (this.hooks.length > 0) {
        answer = this.runHooks(query, answer, 0);
        if (answer instanceof Promise) return this.settle(form, q, query, label, answer, -1, false);
      }
    } catch (e) {
      return this.failed(form, q, query, label, e);
    }
    return this.deliver(form, q, query, label, answer);
  }

  /** Counts a reply the door decided itself, before the engine (FORMERR for a malformed ECS option, REFUSED for a class other than IN). */
  countReply(label: string, rcode: number): void {
    this.deps.metrics.countQuery(label, rcode);
  }

  /** Counts one GSLB answer per data center in `dcs` (`gslbd_dc_answers_total`). */
  countDcs(dcs: readonly string[]): void {
    const metrics = this.deps.metrics;
    for (let i = 0; i < dcs.length; i++) metrics.countDc(dcs[i]!);
  }

  /** Counts one selection of the GSLB record `record` (`gslbd_gslb_record_selections_total`, top N), for doors that select through `nameRrsets`. */
  countRecord(record: SelectedRecord): void {
    this.deps.metrics.countRecord(record);
  }

  /**
   * The start of a timed engine call ({@link performance.now}, ms) for one call in
   * {@link TIMING_SAMPLE}, else −1: the caller measures `performance.now() - started` when ≥ 0.
   */
  startTiming(): number {
    return (this.calls++ & (TIMING_SAMPLE - 1)) === 0 ? performance.now() : -1;
  }

  /**
   * The one log line of an internal failure that the door answers with its error form (`fields`
   * say which request; `message` says what the client got).
   */
  logFailure(err: unknown, fields: Readonly<Record<string, unknown>>, message = 'resolve failed; answering SERVFAIL'): void {
    this.deps.log.error({ err, ...fields, component: this.component }, message);
  }

  private observe(started: number): void {
    this.deps.metrics.resolveTimes.observe((performance.now() - started) / 1000);
  }

  /** Runs the hooks from index `from` on; a promise as soon as one hook returns one (it runs the rest). */
  private runHooks(query: Query, answer: Answer, from: number): Answer | Promise<Answer> {
    const hooks = this.hooks;
    for (let i = from; i < hooks.length; i++) {
      const next = hooks[i]!(query, answer);
      if (next instanceof Promise) return next.then((a) => this.runHooks(query, a, i + 1));
      answer = next;
    }
    return answer;
  }

  /** The reply once an asynchronous answer (`hooks`: not yet through the hooks) or hook settles. */
  private async settle<Q, R>(form: AnswerForm<Q, R>, q: Q, query: Query, label: string, pending: Promise<Answer>, started: number, hooks: boolean): Promise<R> {
    let answer: Answer;
    try {
      answer = await pending;
      if (started >= 0) this.observe(started);
      if (hooks && this.hooks.length > 0) answer = await this.runHooks(query, answer, 0);
    } catch (e) {
      return this.failed(form, q, query, label, e);
    }
    return this.deliver(form, q, query, label, answer);
  }

  private deliver<Q, R>(form: AnswerForm<Q, R>, q: Q, query: Query, label: string, answer: Answer): R {
    const metrics = this.deps.metrics;
    metrics.countQuery(label, answer.rcode);
    this.countDcs(answer.dcs);
    if (metrics.clientAnswers.active && answer.dcs.length > 0) metrics.clientAnswers.add(query.client.address, answer.dcs);
    if (answer.zone !== undefined) metrics.countZone(answer.zone);
    if (answer.selected !== undefined) {
      metrics.countRecord(answer.selected);
      if (answer.moreSelected !== undefined) metrics.countRecords(answer.moreSelected);
    }
    return form.answer(q, answer, query);
  }

  private failed<Q, R>(form: AnswerForm<Q, R>, q: Q, query: Query, label: string, err: unknown): R {
    this.logFailure(err, { qname: query.name, qtype: query.type });
    this.deps.metrics.countQuery(label, RCODE.SERVFAIL);
    return form.error(q, RCODE.SERVFAIL);
  }
}
