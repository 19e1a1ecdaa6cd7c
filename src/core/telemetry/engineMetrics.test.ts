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

test('questions per zone, and GSLB records as a top N: every record counted, only the most selected exported', async (t) => {
  const m = new EngineMetrics();
  const text = async (name: string): Promise<string[]> =>
    (await m.registry.getSingleMetricAsString(name)).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  m.setQueryCounters({ zones: true, topRecords: 2 });
  m.countZone('example.test');
  m.countZone('example.test');
  m.countZone('');
  t.deepEqual(await text('gslbd_dns_queries_by_zone_total'), [
    'gslbd_dns_queries_by_zone_total{zone="example.test"} 2',
    'gslbd_dns_queries_by_zone_total{zone="."} 1',
  ]);

  // 20,000 records selected once each, three of them more often: only two series.
  for (let i = 0; i < 20_000; i++) m.countRecords([{ name: `r${i}.example.test`, type: 'A' }]);
  for (let i = 0; i < 5; i++)
    m.countRecords([
      { name: 'www.example.test', type: 'A' },
      { name: 'www.example.test', type: 'AAAA' },
    ]);
  m.countRecords([{ name: 'r7.example.test', type: 'A' }]);
  t.deepEqual(await text('gslbd_gslb_record_selections_total'), [
    'gslbd_gslb_record_selections_total{record="www.example.test",type="A"} 5',
    'gslbd_gslb_record_selections_total{record="www.example.test",type="AAAA"} 5',
  ]);
  // A record that overtakes the top N replaces one of them; the exported value is its whole count.
  for (let i = 0; i < 9; i++) m.countRecords([{ name: 'r7.example.test', type: 'A' }]);
  t.deepEqual(await text('gslbd_gslb_record_selections_total'), [
    'gslbd_gslb_record_selections_total{record="r7.example.test",type="A"} 11',
    'gslbd_gslb_record_selections_total{record="www.example.test",type="A"} 5',
  ]);

  // Off: nothing more is counted, no record series.
  m.setQueryCounters({ zones: false, topRecords: 0 });
  m.countZone('example.test');
  m.countRecords([{ name: 'www.example.test', type: 'A' }]);
  t.deepEqual(await text('gslbd_dns_queries_by_zone_total'), [
    'gslbd_dns_queries_by_zone_total{zone="example.test"} 2',
    'gslbd_dns_queries_by_zone_total{zone="."} 1',
  ]);
  t.deepEqual(await text('gslbd_gslb_record_selections_total'), []);
});
