import test from 'ava';
import { parseDottedLocation, qualifiersFromData } from '../../core/location/location.js';
import { ask, dcsDown, fixedContext, snapshotOf } from '../../../test/support/selectionFixture.js';
import { prefixLocationDb } from '../../../test/support/prefixLocationDb.js';
import { locationMatches, qnameMatches } from './condition.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

test('location patterns: non-wildcard qualifiers must equal; an unknown data field matches only *', (t) => {
  const client = qualifiersFromData(['Africa', 'ZMB', '', 'Lusaka']);
  const table: [string, boolean][] = [
    ['*.ZMB.*.*', true],
    ['*.zm', true],
    ['Africa', true],
    ['AF.ZM.*.LUSAKA', true],
    ['AF.ZM.Central', false],
    ['Europe', false],
    ['*', true],
  ];
  for (const [p, expected] of table) t.is(locationMatches(parseDottedLocation(p), client), expected, p);
});

test('qname: exact names, and *.x for names strictly below x', (t) => {
  t.true(qnameMatches('www.example.test', 'www.example.test'));
  t.false(qnameMatches('www.example.test', 'example.test'));
  t.true(qnameMatches('*.example.test', 'a.b.example.test'));
  t.false(qnameMatches('*.example.test', 'example.test'));
  t.false(qnameMatches('*.example.test', 'xexample.test'));
});

const WILDCARD_RECORD = `
${EXAMPLE_ZONE}
datacenters: [{ name: a, location: Asia.IN }, { name: b, location: Europe.UK }]
services: [{ name: web, endpoints: [{ dc: a, address: 192.0.2.1 }, { dc: b, address: 192.0.2.2 }] }]
records:
  - name: "*.app.example.test"
    type: A
    service: web
    policy: { type: static-proximity, default: [a] }
    policies:
      rules:
        - { name: eu-name, when: { qname: eu.app.example.test }, action: to-b }
  - name: s.example.test
    type: A
    service: web
    failsafe: [198.51.100.1]
    policy:
      type: static
      rules:
        - { when: { clientSubnet: [10.0.0.0/8] }, dcs: [a] }
        - { when: { all: [{ clientLocation: Europe }, { not: { clientSubnet: [81.1.0.0/16] } }] }, dcs: [b, a] }
actions:
  - { name: to-b, type: view, dcs: [b] }
`;

test('qname conditions see the name asked under a wildcard record, case-insensitively; they do not narrow the scope', (t) => {
  const snap = snapshotOf(WILDCARD_RECORD);
  const ctx = fixedContext();
  t.deepEqual([ask(snap, ctx, 'EU.App.Example.Test', '10.1.1.1').dcs, ask(snap, ctx, 'EU.App.Example.Test', '10.1.1.1').scope], [['b'], 0]);
  t.deepEqual(ask(snap, ctx, 'us.app.example.test', '10.1.1.1').dcs, ['a']);
});

test('static rules: combinations, priority order with failover, and what answers when no rule applies', (t) => {
  const geo = prefixLocationDb([{ cidr: '81.0.0.0/8', location: 'Europe.GB' }]);
  const at = (client: string, down: string[] = []): [string[], string[], number] => {
    const a = ask(snapshotOf(WILDCARD_RECORD, geo, dcsDown(...down)), fixedContext(), 's.example.test', client);
    return [a.dcs, a.data, a.scope];
  };
  t.deepEqual(at('10.9.9.9'), [['a'], ['192.0.2.1'], 8]);
  t.deepEqual(at('81.2.3.4'), [['b'], ['192.0.2.2'], 15]);
  t.deepEqual(at('81.2.3.4', ['b']), [['a'], ['192.0.2.1'], 15], 'the next data center of the list');
  // No rule holds (81.1/16 is excluded; 11/8 is not in Europe): every up data center answers
  // as one group (rotation), never NODATA for some clients only.
  t.deepEqual(at('81.1.3.4'), [['a'], ['192.0.2.1'], 16]);
  t.deepEqual(at('11.1.1.1'), [['a'], ['192.0.2.1'], 8]);
  t.deepEqual(at('10.9.9.9', ['a']), [['b'], ['192.0.2.2'], 8], 'the rule holds but its data centers are down: it does not apply');
  t.deepEqual(at('10.9.9.9', ['a', 'b']), [[], ['198.51.100.1'], 8], 'all down: the all-down policy (fail-safe list), for every client alike');
});
