import test from 'ava';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

/** The `networkProximity` section's checks: zones, data centers' zones, delegated zones and aliases. */

function text(zones: string, dcs: string, policy: string): string {
  return `
networkProximity:
  zones:
${zones}
${EXAMPLE_ZONE}
datacenters:
${dcs}
services:
  - name: web
    endpoints: [{ dc: east, address: 192.0.2.1 }]
records:
  - { name: www.example.test, type: A, service: web, policy: ${policy} }
`;
}

const ZONES = `    - { id: "0", name: U.S. }
    - { id: "0.1", name: East, delegate: { nameServers: [{ name: ns1.z01.example.test, address: 127.0.0.1 }] } }
    - { id: "1", name: Europe }`;

function problems(t: string): string[] {
  try {
    parseConfigText(t);
    return [];
  } catch (e) {
    return (e as { problems?: { path: string; message: string }[] }).problems?.map((p) => `${p.path}: ${p.message}`) ?? [String(e)];
  }
}

test('a valid tiered configuration passes; a sub-tier lists only its subtree', (t) => {
  t.deepEqual(
    problems(
      text(
        ZONES,
        '  - { name: east, proximityZone: "1" }',
        '{ type: network-proximity, delegation: { mode: alias, aliases: { "0.1": www.z01.example.test } } }',
      ),
    ),
    [],
  );
  t.deepEqual(problems(text('    - { id: "0.1", name: East }', '  - { name: east, proximityZone: "0.1" }', '{ type: network-proximity }')), []);
});

test('unknown and duplicate zones, data centers in a delegated zone, aliases for a zone served here, a policy without zones', (t) => {
  t.deepEqual(problems(text(ZONES, '  - { name: east, proximityZone: "0.1" }', '{ type: network-proximity }')), [
    'datacenters[0].proximityZone: zone "0.1" is delegated to other name servers: its data centers are configured there',
  ]);
  t.deepEqual(
    problems(
      text(ZONES, '  - { name: east, proximityZone: "2" }', '{ type: network-proximity, delegation: { mode: alias, aliases: { "1": www.eu.example.test } } }'),
    ),
    [
      'datacenters[0].proximityZone: unknown proximity zone "2"',
      'records[0].policy.delegation.aliases.1: zone "1" is not a delegated proximity zone (networkProximity.zones[].delegate)',
    ],
  );
  t.deepEqual(problems(text(`${ZONES}\n    - { id: "1", name: again }`, '  - { name: east }', '{ type: network-proximity }')), [
    'networkProximity.zones[3].id: zone "1" is already zones[2]',
  ]);
  t.deepEqual(problems(text('    []', '  - { name: east }', '{ type: network-proximity }').replace('  zones:\n    []', '  zones: []')), [
    'records[0].policy.type: a network-proximity record needs networkProximity.zones',
  ]);
});

test('recursive delegation: accepted with a delegated zone (budget and attempt defaults), refused without one', (t) => {
  t.deepEqual(problems(text(ZONES, '  - { name: east, proximityZone: "1" }', '{ type: network-proximity, delegation: { mode: recursive } }')), []);
  const config = parseConfigText(text(ZONES, '  - { name: east, proximityZone: "1" }', '{ type: network-proximity, delegation: { mode: recursive } }'));
  t.like(config.records[0]!.policy, { delegation: { mode: 'recursive', budgetMs: 400, attemptMs: 150 } });
  t.deepEqual(
    problems(text('    - { id: "1", name: Europe }', '  - { name: east, proximityZone: "1" }', '{ type: network-proximity, delegation: { mode: recursive } }')),
    ['records[0].policy.delegation.mode: recursive delegation needs a delegated proximity zone (networkProximity.zones[].delegate)'],
  );
});
