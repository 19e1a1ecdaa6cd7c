import test from 'ava';
import { readFileSync } from 'node:fs';
import { buildHealthPlan } from './healthPlan.js';
import { ConfigError } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';

const ZONES = `
zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]
`;
const BASE = `${ZONES}datacenters: [{ name: a, site: west }, { name: b }]
`;

/** The problems of a configuration as `path: message` lines (without the file name). */
function problems(yaml: string, base = BASE): string[] {
  try {
    parseConfigText(base + yaml);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
    throw e;
  }
  return [];
}

const SVC = (endpoint: string, extra = '') => `
services:
  - name: web
    endpoints: [${endpoint}, { dc: b, address: 192.0.2.2 }]
records:
  - { name: www.example.test, type: A, service: web${extra} }
`;

test('monitors: unknown names, missing tcp ports, targets without an address, timeout > interval, duplicates', (t) => {
  t.deepEqual(problems(`${SVC('{ dc: a, address: 192.0.2.1, monitors: [nope] }')}`), ['services[0].endpoints[0].monitors[0]: unknown monitor "nope"']);
  t.deepEqual(problems(`${SVC('{ dc: a, address: 192.0.2.1, monitors: [t] }')}health: { monitors: [{ name: t, type: tcp }] }`), [
    'services[0].endpoints[0].monitors[0]: monitor "t" (tcp) needs a port: set it on the monitor or in the check target',
  ]);
  t.deepEqual(problems(`${SVC('{ dc: a, address: 192.0.2.1, monitors: [t], check: { port: 25 } }')}health: { monitors: [{ name: t, type: tcp }] }`), []);
  t.deepEqual(
    problems(`
services: [{ name: mx, endpoints: [{ dc: a, target: mx.example.test, monitors: [t] }] }]
records: [{ name: example.test, type: MX, service: mx }]
health: { monitors: [{ name: t, type: tcp, port: 25 }] }`),
    ['services[0].endpoints[0].check.address: an endpoint with a target needs "check.address" to be monitored (monitors resolve no names)'],
  );
  t.deepEqual(problems(`health: { monitors: [{ name: h, type: http, intervalMs: 1000, timeoutMs: 1500 }, { name: h, type: dns, queryName: x.test }] }`), [
    'health.monitors[0].timeoutMs: timeoutMs (1500) is longer than intervalMs (1000)',
    'health.monitors[1].name: monitor "h" is defined twice',
  ]);
});

test('monitor fields are checked by type: https-only keys, regexes, status patterns, DNS types, unknown keys', (t) => {
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, sni: x.test }] }'), [
    'health.monitors[0].sni: unknown key (not part of the configuration schema; check the spelling)',
  ]);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: https, bodyMatches: "(" }] }'), [
    'health.monitors[0].bodyMatches: not a valid regular expression',
  ]);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, expectStatus: [2xx, "20x"] }] }').length, 1);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, expectStatus: [103] }] }').length, 1, 'a 1xx is never final');
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, expectStatus: [1xx] }] }').length, 1, 'a 1xx class is never final');
  t.deepEqual(problems('health: { monitors: [{ name: h, type: dns, queryName: x.test, queryType: ANY }] }').length, 1);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: icmp }] }').length, 1);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, path: health }] }'), ['health.monitors[0].path: a path starts with "/"']);
});

test('a HEAD monitor cannot expect a body: refused with the key that asks for one', (t) => {
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, method: HEAD, bodyContains: ok }] }'), [
    'health.monitors[0].bodyContains: a HEAD response has no body to check: use method GET, or drop bodyContains',
  ]);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: https, method: HEAD, bodyContains: ok, bodyMatches: "^ok$" }] }'), [
    'health.monitors[0].bodyContains: a HEAD response has no body to check: use method GET, or drop bodyContains',
    'health.monitors[0].bodyMatches: a HEAD response has no body to check: use method GET, or drop bodyMatches',
  ]);
  t.deepEqual(problems('health: { monitors: [{ name: h, type: http, method: HEAD }, { name: g, type: http, bodyContains: ok }] }'), []);
});

test('check points and the engine site', (t) => {
  t.deepEqual(problems('datacenters: [{ name: a, checkPoints: { rule: most, wan: [{ monitor: x, address: 192.0.2.1 }] } }]', ZONES).length >= 1, true);
  t.deepEqual(problems('datacenters: [{ name: a, checkPoints: { wan: [], lan: [] } }]', ZONES), [
    'datacenters[0].checkPoints: list at least one check point in "wan" or "lan"',
  ]);
  t.deepEqual(problems('datacenters: [{ name: a, checkPoints: { wan: [{ monitor: x, address: 192.0.2.1 }] } }]', ZONES), [
    'datacenters[0].checkPoints.wan[0].monitor: unknown monitor "x"',
  ]);
  t.deepEqual(problems('site: nowhere'), ['site: no data center is at site "nowhere"']);
  t.deepEqual(problems('site: west'), []);
  t.deepEqual(problems('site: b'), [], 'a data center without a site is its own site');
});

test('record health: tiers, all-down policy, local-first', (t) => {
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { tiers: [{ dcs: [a] }, { dcs: [c] }] }')), [
    'records[0].health.tiers[1].dcs[0]: unknown data center "c"',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { tiers: [{ dcs: [a] }, { dcs: [a] }] }')), [
    'records[0].health.tiers[1].dcs[0]: data center "a" is in more than one tier',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { tiers: [{ endpoints: [192.0.2.1] }, { dcs: [a] }] }')), [
    'records[0].health.tiers[1].dcs[0]: data center "a" is in more than one tier',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { tiers: [{ endpoints: [192.0.2.9] }] }')), [
    'records[0].health.tiers[0].endpoints[0]: service "web" has no endpoint "192.0.2.9"',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { tiers: [{ }] }')), [
    'records[0].health.tiers[0]: a tier lists at least one data center or endpoint',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { threshold: 0 }')).length, 1);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { allDown: failsafe }')), [
    'records[0].health.allDown: "failsafe" needs a non-empty fail-safe list (records[].failsafe)',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { allDown: fail-shut }')).length, 1);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { localFirst: true }')), [
    'records[0].health.localFirst: local-first needs the engine\'s "site" (top-level key)',
  ]);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { coldStart: { waitMs: 0 } }')).length, 1);
  t.deepEqual(problems(SVC('{ dc: a, address: 192.0.2.1 }', ', health: { coldstart: unknown-up }')), [
    'records[0].health.coldstart: unknown key (not part of the configuration schema; check the spelling)',
  ]);
});

test('addresses are canonical after parsing: two spellings are one check, one endpoint key, and tiers match them', (t) => {
  const config = parseConfigText(`${ZONES}
datacenters:
  - name: a
    checkPoints: { wan: [{ monitor: ns, address: "0:0:0:0:0:0:0:1" }, { monitor: ns, address: "::1" }] }
  - name: b
health:
  monitors: [{ name: ns, type: dns, queryName: ns1.example.test, port: 5353 }]
services:
  - name: web
    endpoints:
      - { dc: a, address: "2001:0DB8::0001", monitors: [ns], check: { address: "0::1" } }
      - { dc: b, address: "::FFFF:192.0.2.2" }
records:
  - { name: www.example.test, type: AAAA, service: web, health: { tiers: [{ endpoints: ["2001:db8:0:0:0:0:0:1"] }] } }
`);
  const [first, second] = config.services[0]!.endpoints;
  t.like(first, { address: '2001:db8::1', check: { address: '::1' } });
  t.is(second!.address, '::ffff:192.0.2.2', 'an IPv4-mapped address stays IPv6 (it answers AAAA)');
  t.deepEqual(
    config.datacenters[0]!.checkPoints!.wan.map((p) => p.address),
    ['::1', '::1'],
  );
  t.deepEqual(config.records[0]!.health.tiers[0]!.endpoints, ['2001:db8::1']);
  const plan = buildHealthPlan(config);
  t.deepEqual([...plan.checks.keys()], ['ns@[::1]:5353'], "the endpoint's check and both check points are one check");
  t.deepEqual(
    plan.endpoints.map((e) => e.key),
    ['web/a/2001:db8::1', 'web/b/::ffff:192.0.2.2'],
  );
});

test('examples/health.yaml is valid', (t) => {
  const text = readFileSync(new URL('../../../examples/health.yaml', import.meta.url), 'utf8');
  const config = parseConfigText(text);
  t.is(config.site, 'denver');
  t.is(config.health.monitors.length, 1);
  t.true(config.records[0]!.health.localFirst);
});
