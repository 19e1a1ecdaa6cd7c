import test from 'ava';
import { ConfigError } from '../core/config/load.js';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { allUpHealthView } from '../core/views/healthView.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { CAPABILITIES } from '../process/capabilities.js';
import type { Config } from '../process/configSchema.js';
import { parseConfigText } from '../process/loadConfig.js';
import { compileSnapshot } from './snapshot.js';

/**
 * Duplicates (RFC 2181 §5: an RRset never holds the same record twice). A record configured
 * twice is kept once; an endpoint listed twice in a service, a custom location range given twice,
 * and data center names that differ only in case are load errors naming both places.
 */

const ZONE = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test, NS1.example.test.]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: ns1, type: A, data: 192.0.2.53 }
      - { name: ns1, type: A, data: 192.0.2.54 }
      - { name: v6, type: AAAA, data: "2001:db8::1" }
      - { name: v6, type: AAAA, data: "2001:db8:0:0::1" }
      - { name: txt, type: TXT, data: "hello" }
      - { name: txt, type: TXT, data: "hello" }
      - { name: mx, type: MX, data: "10 mail.example.test" }
      - { name: mx, type: MX, data: "10 MAIL.example.test." }
`;
const DCS = `datacenters:
  - { name: fra1, location: EU.DE }
  - { name: iad1, location: NA.US }
`;

function problems(text: string): string[] {
  try {
    parseConfigText(text, 'gslbd.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

test('a static record configured twice, in any spelling, is one record of its RRset', (t) => {
  const config = parseConfigText(`${ZONE}${DCS}services: []\nrecords: []\n`);
  const snap = compileSnapshot<Config>({
    file: 'x',
    config,
    capabilities: CAPABILITIES,
    state: { geo: emptyLocationDb(), health: allUpHealthView, metrics: emptyMetricView },
    nowMs: 1_700_000_000_000,
  });
  const zone = snap.zones.zone('example.test')!;
  const data = (name: string, type: string) =>
    zone.nodes
      .get(name)!
      .rrsets.get(type as 'A')!
      .map((r) => r.data);
  t.deepEqual(data('example.test', 'NS'), ['ns1.example.test']);
  t.deepEqual(data('ns1.example.test', 'A'), ['192.0.2.53', '192.0.2.54']);
  t.is(data('v6.example.test', 'AAAA').length, 1);
  t.is(data('txt.example.test', 'TXT').length, 1);
  t.is(data('mx.example.test', 'MX').length, 1);
});

test('an endpoint listed twice in one data center of a service is a load error naming both, for every kind of endpoint', (t) => {
  const cases: [string, string][] = [
    ['A', '{ dc: fra1, address: 192.0.2.10 }'],
    ['AAAA', '{ dc: fra1, address: "2001:db8::10" }'],
    ['CNAME', '{ dc: fra1, target: edge.example.net }'],
    ['SRV', '{ dc: fra1, target: sip.example.net, port: 5060 }'],
  ];
  for (const [type, endpoint] of cases) {
    const twice = endpoint.replace('2001:db8::10', '2001:db8:0::10').replace('edge.example.net', 'EDGE.example.net.');
    const text = `${ZONE}${DCS}services:\n  - name: web\n    endpoints:\n      - ${endpoint}\n      - { dc: iad1, ${endpoint.slice(11)}\n      - ${twice}\nrecords:\n  - { name: www.example.test, type: ${type}, service: web }\n`;
    const found = problems(text);
    t.is(found.length, 1, `${type}: ${found.join('; ')}`);
    t.regex(found[0] ?? '', /^services\[0\]\.endpoints\[2\]: the same endpoint as services\[0\]\.endpoints\[0\] \(data center "fra1"/, type);
  }
  // The same address in two data centers is two endpoints.
  t.deepEqual(
    problems(
      `${ZONE}${DCS}services:\n  - name: web\n    endpoints:\n      - { dc: fra1, address: 192.0.2.10 }\n      - { dc: iad1, address: 192.0.2.10 }\nrecords:\n  - { name: www.example.test, type: A, service: web }\n`,
    ),
    [],
  );
});

test('data center names that differ only in case are a load error naming both', (t) => {
  t.deepEqual(problems(`${ZONE}datacenters:\n  - { name: fra1 }\n  - { name: iad1 }\n  - { name: FRA1 }\nservices: []\nrecords: []\n`), [
    'datacenters[2].name: data center "FRA1" differs only in case from "fra1" (datacenters[0].name): names are compared exactly, so one is a typo',
  ]);
});

test('a custom location range given twice, in any form, is a load error naming both', (t) => {
  const custom = (a: string, b: string) =>
    problems(`${ZONE}${DCS}services: []\nrecords: []\ngeo:\n  custom:\n    - ${a}\n    - { cidr: 198.51.100.0/24, location: EU.NL }\n    - ${b}\n`);
  const message = 'geo.custom[2]: covers the same addresses as geo.custom[0]: keep one entry per range (the later one would silently win)';
  t.deepEqual(custom('{ cidr: 192.0.2.0/24, location: EU.DE }', '{ cidr: 192.0.2.0/24, location: NA.US }'), [message]);
  t.deepEqual(custom('{ cidr: 192.0.2.0/24, location: EU.DE }', '{ from: 192.0.2.0, to: 192.0.2.255, location: NA.US }'), [message]);
  t.deepEqual(custom('{ cidr: "2001:db8::/32", location: EU.DE }', '{ cidr: "2001:0db8:0::/32", location: NA.US }'), [message]);
  t.deepEqual(custom('{ cidr: 192.0.2.0/24, location: EU.DE }', '{ cidr: 192.0.2.0/25, location: NA.US }'), [], 'a more specific range is not a duplicate');
});
