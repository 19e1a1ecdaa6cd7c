import test from 'ava';
import { ConfigError } from '../core/config/load.js';
import { parseConfigText } from './loadConfig.js';

/**
 * Issue 23: one run names every dangling reference, also when a schema error elsewhere in the
 * file (a missing field, a wrong type) stops the whole-file checks.
 */

const config = (badRecord: string, datacenters = '[{ name: a }]'): string => `zones:
  - name: example.test
    ns: [ns1.example.test]
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
datacenters: ${datacenters}
services:
  - name: web
    endpoints:
      - { dc: a, address: 192.0.2.1 }
      - { dc: nowhere, address: 192.0.2.2 }
records:
  - { name: www.example.test, type: A, ttl: 30, service: missing }
  - ${badRecord}
  - { name: x.example.test, type: A, ttl: 30, service: web, dcWeights: { ghost: 1 } }
`;

function problems(text: string): string[] {
  try {
    parseConfigText(text, 'c.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.line}:${p.col} ${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

for (const [what, bad] of [
  ['a missing field', '{ name: api.example.test, type: A, ttl: 30 }'],
  ['an unknown type', '{ name: api.example.test, type: QQ, ttl: 30, service: web }'],
  ['a wrong type', '{ name: api.example.test, type: A, ttl: 30, service: [web] }'],
] as const) {
  test(`a record with ${what}: its schema problem and every dangling reference of the other sections, with their places`, (t) => {
    const found = problems(config(bad));
    t.is(found.length, 4, found.join('\n'));
    t.regex(found[0]!, /^13:\d+ records\[1\]/);
    t.deepEqual(found.slice(1), [
      '10:15 services[0].endpoints[1].dc: unknown data center "nowhere"',
      '12:58 records[0].service: unknown service "missing"',
      '14:81 records[2].dcWeights.ghost: unknown data center "ghost"',
    ]);
  });
}

test('an element dropped for its schema error does not make the references to its name dangling', (t) => {
  const found = problems(config('{ name: api.example.test, type: A, ttl: 30, service: web }', '[{ name: a }, { name: nowhere, weight: [1] }]'));
  t.false(
    found.some((p) => p.includes('unknown data center "nowhere"')),
    found.join('\n'),
  );
  t.true(found.some((p) => p.includes('unknown service "missing"')));
});
