import test from 'ava';
import { ConfigError, type ConfigProblem } from '../../core/config/load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { EXAMPLE_ZONE } from '../../../test/support/exampleZone.js';

const HEAD = `
${EXAMPLE_ZONE}
services: [{ name: web, endpoints: [{ dc: a, address: 192.0.2.1 }, { dc: b, address: 192.0.2.2 }] }]
`;

function problems(yaml: string): ConfigProblem[] {
  try {
    parseConfigText(yaml);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.map(({ path, message }) => ({ path, message }));
    throw e;
  }
  return [];
}

test('locations: 7+ qualifiers, empty qualifiers and * inside a name are errors with the path', (t) => {
  t.deepEqual(
    problems(`${HEAD}
datacenters:
  - { name: a, location: "Europe..London" }
  - { name: b, location: "EU.GB.ENG.LONDON.ISP.ORG.X" }
  - { name: c, location: "Eu*.GB" }
  - { name: d, location: "Europe." }
`),
    [
      { path: 'datacenters[0].location', message: 'location "Europe..London" qualifier 2 is empty' },
      { path: 'datacenters[1].location', message: 'location "EU.GB.ENG.LONDON.ISP.ORG.X" has 7 qualifiers; a location has at most 6' },
      { path: 'datacenters[2].location', message: 'location "Eu*.GB" qualifier 1 ("Eu*") uses * inside a name; * must stand alone' },
      { path: 'datacenters[3].location', message: 'location "Europe." qualifier 2 is empty' },
    ],
  );
});

test('conditions and actions: each problem named by its path', (t) => {
  t.deepEqual(
    problems(`${HEAD}
datacenters: [{ name: a }, { name: b }]
records:
  - name: s.example.test
    type: A
    service: web
    policy: { type: static, rules: [{ when: { clientSubnet: 10.0.0.1/8 }, dcs: [a] }] }
actions:
  - { name: pl, type: preferred-locations, locations: [a, b, c, d, e, f, g, h, i] }
  - { name: pl2, type: preferred-locations, locations: ["*.*"] }
  - { name: v, type: view, dcs: [] }
policies:
  rules:
    - { name: x, when: {}, action: v }
    - { name: y, when: { clientLocation: "A.B.C.D.E.F.G", colour: red }, action: v }
    - { name: z, when: { qname: "bad..name", not: { clientSubnet: ["2001:db8::/129"] } }, action: v }
`),
    [
      { path: 'records[0].policy.rules[0].when.clientSubnet[0]', message: '"10.0.0.1/8" has host bits set beyond /8' },
      { path: 'policies.rules[0].when', message: 'a condition needs at least one of clientLocation, clientSubnet, qname, all, any, not' },
      { path: 'policies.rules[1].when.clientLocation[0]', message: 'location "A.B.C.D.E.F.G" has 7 qualifiers; a location has at most 6' },
      { path: 'policies.rules[1].when.colour', message: 'unknown key (not part of the configuration schema; check the spelling)' },
      { path: 'policies.rules[2].when.qname[0]', message: '"bad..name" has an empty label' },
      { path: 'policies.rules[2].when.not.clientSubnet[0]', message: '"2001:db8::/129" has an invalid prefix length (0–128)' },
      { path: 'actions[0].locations', message: 'at most 8 preferred locations (seed 002)' },
      { path: 'actions[1].locations[0]', message: 'a preferred location needs at least one qualifier that is not *' },
      { path: 'actions[2].dcs', message: 'a data center list needs at least one data center' },
    ],
  );
});

test('references: actions, data centers, static records, unreachable rules', (t) => {
  t.deepEqual(
    problems(`${HEAD}
datacenters: [{ name: a }, { name: b }]
records:
  - { name: www.example.test, type: A, service: web, policies: { rules: [{ name: p, action: nope }, { name: p, action: v }] } }
  - name: s.example.test
    type: A
    service: web
    policy: { type: static, rules: [{ dcs: [a] }, { when: { clientSubnet: [10.0.0.0/8] }, dcs: [zz, [b, b]] }] }
    policies: { rules: [{ name: p, action: v }] }
actions:
  - { name: v, type: view, dcs: [a, [b, a]] }
  - { name: v, type: view, dcs: [b] }
policies:
  rules:
    - { name: all, action: v }
    - { name: later, when: { qname: www.example.test }, action: v }
`),
    [
      { path: 'actions[0].dcs[1][1]', message: 'data center "a" is listed twice' },
      { path: 'actions[1].name', message: 'action "v" is defined twice' },
      { path: 'policies.rules[1]', message: 'unreachable: rule "all" has no condition, so the rules after it never apply' },
      { path: 'records[0].policies.rules[0].action', message: 'unknown action "nope"' },
      { path: 'records[0].policies.rules[1].name', message: 'policy "p" is defined twice in this binding' },
      { path: 'records[0].policies.rules[1]', message: 'unreachable: rule "p" has no condition, so the rules after it never apply' },
      { path: 'records[1].policies', message: 'DNS policies do not apply to a static record; put the condition into its rules' },
      { path: 'records[1].policy.rules[1].dcs[0]', message: 'unknown data center "zz"' },
      { path: 'records[1].policy.rules[1].dcs[1][1]', message: 'data center "b" is listed twice' },
      { path: 'records[1].policy.rules[1]', message: 'unreachable: rule rules[0] has no condition, so the rules after it never apply' },
    ],
  );
});

test('a valid configuration with every policy form parses, normalised', (t) => {
  const cfg = parseConfigText(`${HEAD}
datacenters: [{ name: a, location: Asia.HK }, { name: b, location: Europe.UK }]
records:
  - name: www.example.test
    type: A
    service: web
    policies:
      subnetOverlap: most-specific
      rules:
        - { name: internal, when: { clientSubnet: ["10.0.0.0/8", "::ffff:172.16.0.0/108"] }, action: view-a }
        - { name: lab, when: { clientSubnet: 10.20.0.0/16, qname: "*.example.test" }, action: prefer }
  - name: s.example.test
    type: A
    service: web
    policy:
      type: static
      rules:
        - { when: { any: [{ clientLocation: "*.ZMB.*.*" }, { not: { clientLocation: [Europe, Asia] } }] }, dcs: [[a, b]] }
        - { dcs: [b, a] }
actions:
  - { name: view-a, type: view, dcs: [a] }
  - { name: prefer, type: preferred-locations, locations: ["Asia.HK", "Europe.UK"] }
`);
  const rec = cfg.records[0]!;
  t.deepEqual(
    rec.policies?.rules[0]?.when?.clientSubnet?.map((s) => s.text),
    ['10.0.0.0/8', '172.16.0.0/12'],
    'IPv4-mapped prefixes are IPv4 prefixes',
  );
  t.deepEqual(rec.policies?.rules[1]?.when?.qname, ['*.example.test']);
  t.deepEqual(cfg.actions[1], {
    name: 'prefer',
    type: 'preferred-locations',
    locations: [
      ['AS', 'HK', '*', '*', '*', '*'],
      ['EU', 'GB', '*', '*', '*', '*'],
    ],
  });
  const s = cfg.records[1]!.policy;
  t.is(s.type, 'static');
  if (s.type === 'static')
    t.deepEqual(s.rules[0]!.when?.any?.[1]?.not?.clientLocation, [
      ['EU', '*', '*', '*', '*', '*'],
      ['AS', '*', '*', '*', '*', '*'],
    ]);
});
