import test from 'ava';
import { RCODE } from '../core/dns/rcode.js';
import type { AfterAnswerHook, QueryEngine } from '../core/contracts/frontDoor.js';
import { parseIp } from '../core/net/ipAddress.js';
import type { Answer, Query } from '../core/model/query.js';
import { EngineMetrics } from '../core/telemetry/engineMetrics.js';
import type { Logger } from '../core/telemetry/logger.js';
import { fixedContext } from '../../test/support/selectionFixture.js';
import { AnswerWrapper, TIMING_SAMPLE, type AnswerForm } from './answerWrapper.js';

const RESOLVER = parseIp('192.0.2.53');
const ECS = { family: 1 as const, sourcePrefix: 24, address: parseIp('198.51.100.0'), effectivePrefix: 24 };

/** A reply of the test form: what the wrapper asked the form to write. */
type Written = { kind: 'answer'; ctx: string; answer: Answer; query: Query } | { kind: 'error'; ctx: string; rcode: number };

const FORM: AnswerForm<string, Written> = {
  answer: (ctx, answer, query) => ({ kind: 'answer', ctx, answer, query }),
  error: (ctx, rcode) => ({ kind: 'error', ctx, rcode }),
};

/** The wrapper's reply where it must be synchronous (no asynchronous engine or hook in that harness). */
function now(reply: Written | Promise<Written>): Written {
  if (reply instanceof Promise) throw new Error('the reply is a promise where a synchronous one was expected');
  return reply;
}

function answerOf(rcode: number, dcs: string[] = [], data = '192.0.2.1'): Answer {
  return { rcode, authoritative: true, answers: [{ name: 'www.example.test', type: 'A', ttl: 30, data }], authority: [], additional: [], scope: 24, dcs };
}

interface Harness {
  wrapper: AnswerWrapper;
  metrics: EngineMetrics;
  asked: Query[];
  errors: { fields: Record<string, unknown>; message: string }[];
  /** Lines of a metric's exposition without comments. */
  metric(name: string): Promise<string>;
}

function harness(resolve: (q: Query) => Answer | Promise<Answer>, afterAnswer: AfterAnswerHook[] = [], label?: string): Harness {
  const asked: Query[] = [];
  const errors: Harness['errors'] = [];
  const engine: QueryEngine = {
    resolve(q) {
      asked.push(q);
      return resolve(q);
    },
    ctx: fixedContext(),
  };
  const log = { error: (fields: Record<string, unknown>, message: string) => errors.push({ fields, message }) } as unknown as Logger;
  const metrics = new EngineMetrics();
  const wrapper = new AnswerWrapper({ engine, metrics, log, afterAnswer }, { label, component: 'test' });
  return {
    wrapper,
    metrics,
    asked,
    errors,
    async metric(name) {
      return (await metrics.registry.getSingleMetricAsString(name))
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
        .join('\n');
    },
  };
}

test('a synchronous answer: the client from ECS or the resolver, the form writes it, counted by rcode and data center; no promise', async (t) => {
  const h = harness(() => answerOf(RCODE.NOERROR, ['eu', 'us']));
  const withEcs = h.wrapper.answer(FORM, 'c1', 'WWW.example.test', 1, 'udp', ECS, RESOLVER);
  t.false(withEcs instanceof Promise);
  t.like(withEcs, { kind: 'answer', ctx: 'c1', answer: { rcode: 0, dcs: ['eu', 'us'] } });
  // `dnssecOk` and `delegationHop` are undefined when the door passes neither (Query.dnssecOk): the keys are there, one object shape for every door.
  t.deepEqual(h.asked[0], {
    name: 'WWW.example.test',
    type: 1,
    client: { address: ECS.address, sourcePrefix: 24, fromEcs: true, resolver: RESOLVER },
    transport: 'udp',
    dnssecOk: undefined,
    delegationHop: undefined,
  });
  now(h.wrapper.answer(FORM, 'c2', 'www.example.test', 1, 'tcp', { ...ECS, effectivePrefix: 0 }, RESOLVER));
  t.deepEqual(h.asked[1]!.client, { address: RESOLVER, sourcePrefix: 32, fromEcs: false }, 'ECS /0: the resolver');
  now(h.wrapper.answer(FORM, 'c3', 'www.example.test', 1, 'tcp', undefined, RESOLVER));
  t.deepEqual(h.asked[2]!.client, { address: RESOLVER, sourcePrefix: 32, fromEcs: false }, 'no ECS: the resolver');
  t.is(
    await h.metric('gslbd_dns_queries_total'),
    ['gslbd_dns_queries_total{transport="udp",rcode="NOERROR"} 1', 'gslbd_dns_queries_total{transport="tcp",rcode="NOERROR"} 2'].join('\n'),
  );
  t.is(await h.metric('gslbd_dc_answers_total'), ['gslbd_dc_answers_total{dc="eu"} 3', 'gslbd_dc_answers_total{dc="us"} 3'].join('\n'));
});

test('a fixed label counts every transport under it', async (t) => {
  const h = harness(() => answerOf(RCODE.NXDOMAIN), [], 'compact');
  now(h.wrapper.answer(FORM, '', 'nope.example.test', 1, 'udp', undefined, RESOLVER));
  now(h.wrapper.answer(FORM, '', 'nope.example.test', 1, 'tcp', undefined, RESOLVER));
  h.wrapper.countReply('compact', RCODE.FORMERR);
  t.is(
    await h.metric('gslbd_dns_queries_total'),
    ['gslbd_dns_queries_total{transport="compact",rcode="NXDOMAIN"} 2', 'gslbd_dns_queries_total{transport="compact",rcode="FORMERR"} 1'].join('\n'),
  );
});

test('meta-QTYPEs get their error code from the form without reaching the engine', async (t) => {
  const h = harness(() => answerOf(RCODE.NOERROR));
  t.like(h.wrapper.answer(FORM, 'x', 'example.test', 252, 'tcp', undefined, RESOLVER), { kind: 'error', ctx: 'x', rcode: RCODE.REFUSED }, 'AXFR');
  t.like(h.wrapper.answer(FORM, 'x', 'example.test', 251, 'udp', undefined, RESOLVER), { kind: 'error', rcode: RCODE.REFUSED }, 'IXFR');
  t.like(h.wrapper.answer(FORM, 'x', 'example.test', 254, 'udp', undefined, RESOLVER), { kind: 'error', rcode: RCODE.NOTIMP }, 'MAILA');
  t.like(h.wrapper.answer(FORM, 'x', 'example.test', 250, 'udp', undefined, RESOLVER), { kind: 'error', rcode: RCODE.FORMERR }, 'TSIG');
  t.is(h.asked.length, 0);
  t.regex(await h.metric('gslbd_dns_queries_total'), /transport="tcp",rcode="REFUSED"} 1/);
});

test('an engine failure is SERVFAIL from the form, counted, with one log line', async (t) => {
  const h = harness(() => {
    throw new Error('boom');
  });
  t.like(h.wrapper.answer(FORM, 'x', 'www.example.test', 28, 'udp', undefined, RESOLVER), { kind: 'error', ctx: 'x', rcode: RCODE.SERVFAIL });
  t.is(h.errors.length, 1);
  t.like(h.errors[0], { fields: { qname: 'www.example.test', qtype: 28, component: 'test' }, message: 'resolve failed; answering SERVFAIL' });
  t.is((h.errors[0]!.fields.err as Error).message, 'boom');
  t.is(await h.metric('gslbd_dns_queries_total'), 'gslbd_dns_queries_total{transport="udp",rcode="SERVFAIL"} 1');
});

test('one resolve() in TIMING_SAMPLE is timed: the first, then every 16th', async (t) => {
  t.is(TIMING_SAMPLE, 16);
  const h = harness(() => answerOf(RCODE.NOERROR));
  const count = async (): Promise<string> => /gslbd_resolve_duration_seconds_count (\d+)/.exec(await h.metric('gslbd_resolve_duration_seconds'))![1]!;
  now(h.wrapper.answer(FORM, '', 'www.example.test', 1, 'udp', undefined, RESOLVER));
  t.is(await count(), '1');
  for (let i = 1; i < TIMING_SAMPLE; i++) now(h.wrapper.answer(FORM, '', 'www.example.test', 1, 'udp', undefined, RESOLVER));
  t.is(await count(), '1');
  now(h.wrapper.answer(FORM, '', 'www.example.test', 1, 'udp', undefined, RESOLVER));
  t.is(await count(), '2');
  // Doors that time something else take the same cadence.
  const other = harness(() => answerOf(RCODE.NOERROR));
  const starts = Array.from({ length: 33 }, () => other.wrapper.startTiming());
  t.deepEqual(
    starts.map((s, i) => [i, s >= 0]).filter(([, timed]) => timed),
    [
      [0, true],
      [16, true],
      [32, true],
    ],
  );
});

test('an asynchronous answer: the reply is a promise of what the form writes, counted and timed when it settles', async (t) => {
  const h = harness(() => Promise.resolve(answerOf(RCODE.NOERROR, ['ap'])));
  const reply = h.wrapper.answer(FORM, 'later', 'www.example.test', 1, 'udp', ECS, RESOLVER);
  t.true(reply instanceof Promise);
  t.like(await reply, { kind: 'answer', ctx: 'later', answer: { dcs: ['ap'] }, query: { client: { fromEcs: true } } });
  t.is(await h.metric('gslbd_dc_answers_total'), 'gslbd_dc_answers_total{dc="ap"} 1');
  t.regex(await h.metric('gslbd_resolve_duration_seconds'), /^gslbd_resolve_duration_seconds_count 1$/m);
});

test('an asynchronous failure is SERVFAIL with one log line; the promise does not reject', async (t) => {
  const h = harness(() => Promise.reject(new Error('upstream name server timed out')));
  t.like(await h.wrapper.answer(FORM, 'x', 'www.example.test', 1, 'udp', undefined, RESOLVER), { kind: 'error', rcode: RCODE.SERVFAIL });
  t.is(h.errors.length, 1);
  t.is(await h.metric('gslbd_dns_queries_total'), 'gslbd_dns_queries_total{transport="udp",rcode="SERVFAIL"} 1');
});

test('after-answer hooks run in order on the engine answer, synchronous ones without a promise', async (t) => {
  const order: string[] = [];
  const step =
    (name: string, data: string): AfterAnswerHook =>
    (query, a) => {
      order.push(`${name}:${query.name}:${a.answers[0]!.data as string}`);
      return { ...a, answers: [{ ...a.answers[0]!, data }] };
    };
  const h = harness(() => answerOf(RCODE.NOERROR), [step('first', '192.0.2.2'), step('second', '192.0.2.3')]);
  const reply = h.wrapper.answer(FORM, '', 'www.example.test', 1, 'udp', undefined, RESOLVER);
  t.false(reply instanceof Promise);
  t.is((reply as Written & { kind: 'answer' }).answer.answers[0]!.data, '192.0.2.3');
  t.deepEqual(order, ['first:www.example.test:192.0.2.1', 'second:www.example.test:192.0.2.2']);
  // Meta-QTYPEs and failures are the door's error form: no hook sees them.
  now(h.wrapper.answer(FORM, '', 'example.test', 252, 'tcp', undefined, RESOLVER));
  t.is(order.length, 2);
});

test('an asynchronous hook makes the reply a promise and the hooks after it still run; a failing hook is SERVFAIL', async (t) => {
  const signed: AfterAnswerHook = async (_q, a) => ({ ...a, additional: [{ name: 'www.example.test', type: 'TXT', ttl: 30, data: ['signed'] }] });
  const counted: string[] = [];
  const last: AfterAnswerHook = (_q, a) => {
    counted.push(a.additional.length === 1 ? 'after the signature' : 'before it');
    return a;
  };
  const h = harness(() => answerOf(RCODE.NOERROR), [signed, last]);
  const reply = h.wrapper.answer(FORM, '', 'www.example.test', 1, 'udp', undefined, RESOLVER);
  t.true(reply instanceof Promise);
  t.like(await reply, { kind: 'answer', answer: { additional: [{ type: 'TXT' }] } });
  t.deepEqual(counted, ['after the signature']);

  const failing = harness(
    () => Promise.resolve(answerOf(RCODE.NOERROR)),
    [
      () => {
        throw new Error('no key');
      },
    ],
  );
  t.like(await failing.wrapper.answer(FORM, '', 'www.example.test', 1, 'udp', undefined, RESOLVER), { kind: 'error', rcode: RCODE.SERVFAIL });
  t.is(failing.errors.length, 1);
});

test('an answer from a zone counts in the zone counter; its GSLB selections count per record', async (t) => {
  let more = false;
  const h = harness(() => ({
    ...answerOf(RCODE.NOERROR, ['eu']),
    zone: 'example.test',
    selected: { name: 'www.example.test', type: 'A' },
    ...(more ? { moreSelected: [{ name: 'api.example.test', type: 'A' }] } : {}),
  }));
  h.metrics.setQueryCounters({ zones: true, topRecords: 5 });
  now(h.wrapper.answer(FORM, 'c', 'www.example.test', 1, 'udp', undefined, RESOLVER));
  now(h.wrapper.answer(FORM, 'c', 'www.example.test', 1, 'tcp', undefined, RESOLVER));
  t.is(await h.metric('gslbd_dns_queries_by_zone_total'), 'gslbd_dns_queries_by_zone_total{zone="example.test"} 2');
  t.is(await h.metric('gslbd_gslb_record_selections_total'), 'gslbd_gslb_record_selections_total{record="www.example.test",type="A"} 2');
  // An answer that selected several records (a chain through GSLB records) counts each of them.
  more = true;
  now(h.wrapper.answer(FORM, 'c', 'www.example.test', 1, 'tcp', undefined, RESOLVER));
  t.is(
    (await h.metric('gslbd_gslb_record_selections_total')).split('\n').sort().join('\n'),
    [
      'gslbd_gslb_record_selections_total{record="api.example.test",type="A"} 1',
      'gslbd_gslb_record_selections_total{record="www.example.test",type="A"} 3',
    ].join('\n'),
  );
});
