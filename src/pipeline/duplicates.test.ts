import test from 'ava';
import { ConfigError } from '../core/config/load.js';
import { emptyLocationDb } from '../core/location/locationDb.js';
import { allUpHealthView } from '../core/views/healthView.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { CAPABILITIES } from '../process/capabilities.js';
import type { Config } from '../process/configSchema.js';
import { parseConfigText } from '../process/loadConfig.js';
import { compileSnapshot } from './snapshot.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../test/support/selectionFixture.js';

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

test('the same data in two data centers picked for one answer (pickDcCount >= 2) is answered once, for every type and balance algorithm', (t) => {
  const cases: [type: string, endpoint: string, query: string][] = [
    ['A', 'address: 192.0.2.10', 'A'],
    ['AAAA', 'address: "2001:db8::10"', 'AAAA'],
    ['MX', 'target: mail.example.net', 'MX'],
    ['SRV', 'target: sip.example.net, port: 5060', 'SRV'],
  ];
  for (const algorithm of ['round-robin', 'all', 'weighted-random', 'weighted-round-robin']) {
    for (const [type, endpoint, qtype] of cases) {
      // fra1 and iad1 both hold the endpoint (in two spellings for AAAA); sin1 holds a different one.
      const other = endpoint.replace('192.0.2.10', '192.0.2.11').replace('2001:db8::10', '2001:db8::11').replace('.example.net', '2.example.net');
      const yaml = `${ZONE}${DCS}  - { name: sin1, location: AS.SG }
services:
  - name: web
    endpoints:
      - { dc: fra1, ${endpoint} }
      - { dc: iad1, ${endpoint.replace('2001:db8::10', '2001:db8:0:0::10')} }
      - { dc: sin1, ${other} }
records:
  - name: www.example.test
    type: ${type}
    service: web
    policy: { type: static-proximity, pickDcCount: 3, balanceAlgorithm: ${algorithm}, default: [fra1, iad1, sin1] }
`;
      const snap = snapshotOf(yaml);
      const a = ask(snap, fixedContext(3), 'www.example.test', '198.51.100.7/32', qtype as 'A');
      t.deepEqual(a.dcs, ['fra1', 'iad1', 'sin1'], `${algorithm} ${type}: three data centers picked`);
      t.is(a.data.length, 2, `${algorithm} ${type}: ${a.data.join(', ')}`);
      t.is(new Set(a.data).size, 2, `${algorithm} ${type}: no record twice`);
    }
  }
});

test('a fail-safe address listed twice, in any spelling, is answered once', (t) => {
  const yaml = (type: string, failsafe: string, address: string) => `${ZONE}${DCS}services:
  - name: web
    endpoints:
      - { dc: fra1, address: "${address}" }
records:
  - { name: www.example.test, type: ${type}, service: web, failsafe: ${failsafe} }
`;
  const a = ask(
    snapshotOf(yaml('A', '[192.0.2.9, 192.0.2.9, 192.0.2.8]', '192.0.2.1'), undefined, dcsDown('fra1')),
    fixedContext(),
    'www.example.test',
    '198.51.100.7/32',
  );
  t.deepEqual(a.data, ['192.0.2.9', '192.0.2.8']);
  const v6 = ask(
    snapshotOf(yaml('AAAA', '["2001:db8::9", "2001:db8:0:0::9"]', '2001:db8::1'), undefined, dcsDown('fra1')),
    fixedContext(),
    'www.example.test',
    '198.51.100.7/32',
    'AAAA',
  );
  t.deepEqual(v6.data, ['2001:db8::9']);
});
