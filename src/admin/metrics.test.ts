import test from 'ava';
import { EngineMetrics } from './metrics.js';

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
