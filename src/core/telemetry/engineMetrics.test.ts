import test from 'ava';
import { EngineMetrics } from './engineMetrics.js';

test('counts kept in plain numbers reach the counters at every scrape, beside direct increments', async (t) => {
  const m = new EngineMetrics();
  const text = async (name: string): Promise<string> => m.registry.getSingleMetricAsString(name);
  m.countQuery('compact', 0);
  m.countQuery('compact', 0);
  m.countQuery('udp', 3);
  m.countQuery('compact', 99);
  m.countDc('eu-west');
  m.queries.inc({ transport: 'tcp', rcode: 'NOERROR' });
  let q = await text('gslbd_dns_queries_total');
  t.regex(q, /^gslbd_dns_queries_total\{transport="compact",rcode="NOERROR"\} 2$/m);
  t.regex(q, /^gslbd_dns_queries_total\{transport="udp",rcode="NXDOMAIN"\} 1$/m);
  t.regex(q, /^gslbd_dns_queries_total\{transport="compact",rcode="99"\} 1$/m);
  t.regex(q, /^gslbd_dns_queries_total\{transport="tcp",rcode="NOERROR"\} 1$/m);
  t.regex(await text('gslbd_dc_answers_total'), /^gslbd_dc_answers_total\{dc="eu-west"\} 1$/m);

  m.countQuery('compact', 0);
  m.countDc('eu-west');
  m.countDc('us-east');
  q = await text('gslbd_dns_queries_total');
  t.regex(q, /^gslbd_dns_queries_total\{transport="compact",rcode="NOERROR"\} 3$/m);
  t.regex(q, /^gslbd_dns_queries_total\{transport="udp",rcode="NXDOMAIN"\} 1$/m, 'counts already added are not added again');
  const dcs = await text('gslbd_dc_answers_total');
  t.regex(dcs, /^gslbd_dc_answers_total\{dc="eu-west"\} 2$/m);
  t.regex(dcs, /^gslbd_dc_answers_total\{dc="us-east"\} 1$/m);
  t.regex(await m.registry.metrics(), /^gslbd_dc_answers_total\{dc="us-east"\} 1$/m, 'the whole-registry scrape agrees');
});

test('resolve() durations recorded in resolveTimes reach gslbd_resolve_duration_seconds at every scrape', async (t) => {
  const m = new EngineMetrics();
  const text = async (): Promise<string> => m.registry.getSingleMetricAsString('gslbd_resolve_duration_seconds');
  m.resolveTimes.observe(1.5e-6);
  m.resolveTimes.observe(3e-6);
  m.resolveTimes.observe(0.5);
  let h = await text();
  t.regex(h, /^gslbd_resolve_duration_seconds_bucket\{le="0.000001"\} 0$/m);
  t.regex(h, /^gslbd_resolve_duration_seconds_bucket\{le="0.000002"\} 1$/m);
  t.regex(h, /^gslbd_resolve_duration_seconds_bucket\{le="0.000005"\} 2$/m);
  t.regex(h, /^gslbd_resolve_duration_seconds_bucket\{le="0.01"\} 2$/m);
  t.regex(h, /^gslbd_resolve_duration_seconds_bucket\{le="\+Inf"\} 3$/m);
  t.regex(h, /^gslbd_resolve_duration_seconds_count 3$/m);
  t.regex(h, /^gslbd_resolve_duration_seconds_sum 0\.5000045$/m);
  m.resolveTimes.observe(1e-6);
  h = await text();
  t.regex(h, /^gslbd_resolve_duration_seconds_bucket\{le="0.000001"\} 1$/m, 'a value equal to a bound counts in that bound (le)');
  t.regex(h, /^gslbd_resolve_duration_seconds_count 4$/m);
  t.is((h.match(/^gslbd_resolve_duration_seconds_count /gm) ?? []).length, 1, 'one series, no duplicate from the unused prom-client state');
});
