import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BALANCE_ALGORITHMS } from '../../capabilities/balance/registry.js';
import { ConfigError, formatPath, type ConfigProblem } from './load.js';
import { loadConfigFile, parseConfigText } from '../../process/loadConfig.js';
import { replaceOnce } from '../../../test/support/replaceOnce.js';
import { engineExampleFiles } from '../../../test/support/exampleConfigs.js';

/**
 * Every error path of the loader with its exact path and message (issue 2, "Configuration").
 * Each case edits one line of a valid base configuration, so exactly one problem is expected.
 */

const BASE = `
zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
      - { name: ns1, type: A, data: 192.0.2.53 }
datacenters:
  - { name: dc1, location: EU.NL, lat: 52.4, lon: 4.9 }
services:
  - name: web
    endpoints:
      - { dc: dc1, address: 192.0.2.10 }
records:
  - { name: www.example.test, type: A, service: web }
`;

/** BASE with `from` replaced by `to` (which must occur exactly once). */
function edit(from: string, to: string, text = BASE): string {
  return replaceOnce(text, from, to);
}

/** The problems' paths and messages (their positions: `positions.test.ts`); a YAML error's position as its path, `line L:C`. */
function problems(text: string): readonly ConfigProblem[] {
  try {
    parseConfigText(text, 'gslbd.yaml');
  } catch (e) {
    if (e instanceof ConfigError) {
      return e.problems.map((p) => ({ path: p.message.startsWith('YAML:') && p.line !== undefined ? `line ${p.line}:${p.col}` : p.path, message: p.message }));
    }
    throw e;
  }
  throw new Error('the configuration was accepted');
}

const UNKNOWN_KEY = 'unknown key (not part of the configuration schema; check the spelling)';
const RECORD = 'service: web }';

test('the base configuration is valid', (t) => {
  const c = parseConfigText(BASE);
  t.is(c.records[0]!.ttl, 30);
  t.deepEqual(c.datacenters[0]!.location, ['EU', 'NL', '*', '*', '*', '*']);
});

const errorCases: [title: string, text: string, path: string, message: string][] = [
  ['unknown top-level key', `${BASE}bogus: 1\n`, 'bogus', UNKNOWN_KEY],
  ['unknown key in the SOA', edit('soa: {', 'soa: { mnmae: x,'), 'zones[0].soa.mnmae', UNKNOWN_KEY],
  ['unknown key in a static record', edit('type: A, data', 'type: A, tll: 5, data'), 'zones[0].records[0].tll', UNKNOWN_KEY],
  ['unknown key in a data center', edit('lon: 4.9 }', 'lon: 4.9, region: x }'), 'datacenters[0].region', UNKNOWN_KEY],
  ['unknown key in an endpoint', edit('address: 192.0.2.10 }', 'address: 192.0.2.10, wieght: 2 }'), 'services[0].endpoints[0].wieght', UNKNOWN_KEY],
  ['unknown key in a policy', edit(RECORD, 'service: web, policy: { type: static-proximity, pickDcCnt: 2 } }'), 'records[0].policy.pickDcCnt', UNKNOWN_KEY],
  ['unknown key in the listeners', `${BASE}listeners: { dns: [], admn: {} }\n`, 'listeners.admn', UNKNOWN_KEY],
  ['unknown key in a DNS listener', `${BASE}listeners: { dns: [{ address: 127.0.0.1, prot: 53 }] }\n`, 'listeners.dns[0].prot', UNKNOWN_KEY],
  ['wrong type', edit(RECORD, 'service: web, ttl: [30] }'), 'records[0].ttl', 'Invalid input: expected number or string, received array'],
  ['TTL 2^31 on a GSLB record', edit(RECORD, 'service: web, ttl: 2147483648 }'), 'records[0].ttl', 'Too big: expected number to be <=2147483647'],
  [
    'TTL 2^31 on a static record',
    edit('type: A, data', 'type: A, ttl: 2147483648, data'),
    'zones[0].records[0].ttl',
    'Too big: expected number to be <=2147483647',
  ],
  ['TTL 2^31 as the SOA minimum', edit('soa: {', 'soa: { minimum: 2147483648,'), 'zones[0].soa.minimum', 'Too big: expected number to be <=2147483647'],
  ['negative TTL', edit(RECORD, 'service: web, failsafeTtl: -1 }'), 'records[0].failsafeTtl', 'Too small: expected number to be >=0'],
  [
    'location with 7 qualifiers',
    edit('EU.NL', 'EU.NL.a.b.c.d.e'),
    'datacenters[0].location',
    'location "EU.NL.a.b.c.d.e" has 7 qualifiers; a location has at most 6',
  ],
  ['location with an empty qualifier', edit('EU.NL', 'Europe..London'), 'datacenters[0].location', 'location "Europe..London" qualifier 2 is empty'],
  [
    'location with * inside a name',
    edit('EU.NL', 'Eu*.NL'),
    'datacenters[0].location',
    'location "Eu*.NL" qualifier 1 ("Eu*") uses * inside a name; * must stand alone',
  ],
  ['unknown data center of an endpoint', edit('{ dc: dc1', '{ dc: dc9'), 'services[0].endpoints[0].dc', 'unknown data center "dc9"'],
  ['unknown service of a record', edit(RECORD, 'service: webx }'), 'records[0].service', 'unknown service "webx"'],
  [
    'unknown default data center',
    edit(RECORD, 'service: web, policy: { type: static-proximity, default: [nope] } }'),
    'records[0].policy.default[0]',
    'unknown data center "nope"',
  ],
  ['GSLB record outside any zone', edit('www.example.test', 'www.other.test'), 'records[0].name', '"www.other.test" is not inside any configured zone'],
  [
    'service that cannot answer the type',
    edit('type: A, service', 'type: AAAA, service'),
    'records[0].service',
    'service "web" has no endpoint that can answer AAAA',
  ],
  [
    'static CNAME sharing a name with a static A',
    edit('data: 192.0.2.53 }', 'data: 192.0.2.53 }\n      - { name: ns1, type: CNAME, data: x.example.test }'),
    'zones[0].records[1]',
    'a CNAME cannot share the name "ns1.example.test" with other records',
  ],
  [
    'GSLB A sharing a name with a static CNAME',
    edit('data: 192.0.2.53 }', 'data: 192.0.2.53 }\n      - { name: www, type: CNAME, data: x.example.test }'),
    'records[0].type',
    '"www.example.test" already has a CNAME; no other record may share its name',
  ],
  [
    'static CNAME at the apex (beside SOA and NS)',
    edit('data: 192.0.2.53 }', 'data: 192.0.2.53 }\n      - { name: "@", type: CNAME, data: x.example.test }'),
    'zones[0].records[1]',
    'a CNAME cannot share the name "example.test" with other records',
  ],
  [
    'fail-safe data invalid for the type',
    edit(RECORD, 'service: web, failsafe: ["2001:db8::1"] }'),
    'records[0].failsafe[0]',
    'not valid A data: "2001:db8::1" is not an IPv4 address',
  ],
  [
    'absolute owner in a zone (relative-owner mistake)',
    edit('name: ns1, type: A', 'name: ns1.example.test, type: A'),
    'zones[0].records[0].name',
    'owner names in a zone are relative: write "ns1", not "ns1.example.test"',
  ],
  [
    'the apex written absolute',
    edit('name: ns1, type: A', 'name: example.test., type: A'),
    'zones[0].records[0].name',
    'owner names in a zone are relative: write "@", not "example.test."',
  ],
  ['static data invalid for the type', edit('data: 192.0.2.53', 'data: 300.1.1.1'), 'zones[0].records[0].data', '"300.1.1.1" is not an IPv4 address'],
  ['owner name with an empty label', edit('name: ns1, type: A', 'name: "a..b", type: A'), 'zones[0].records[0].name', '"a..b" has an empty label'],
  [
    'record type not allowed for GSLB',
    edit('type: A, service', 'type: TXT, service'),
    'records[0].type',
    'Invalid option: expected one of "A"|"AAAA"|"CNAME"|"MX"|"SRV"',
  ],
  [
    'unknown balance algorithm',
    edit(RECORD, 'service: web, policy: { type: static-proximity, balanceAlgorithm: rnd } }'),
    'records[0].policy.balanceAlgorithm',
    `Invalid option: expected one of ${BALANCE_ALGORITHMS.map((a) => `"${a.name}"`).join('|')}`,
  ],
  [
    'unknown policy type',
    edit(RECORD, 'service: web, policy: { type: magic } }'),
    'records[0].policy.type',
    'must be one of: static-proximity, static, multi-source, network-proximity',
  ],
  [
    'pickDcCount 0',
    edit(RECORD, 'service: web, policy: { type: static-proximity, pickDcCount: 0 } }'),
    'records[0].policy.pickDcCount',
    'Too small: expected number to be >=1',
  ],
  ['missing required field', edit(', service: web }', ' }'), 'records[0].service', 'is required (string)'],
  ['no zones at all', 'datacenters: []\n', 'zones', 'is required (array)'],
  [
    'endpoint with address and target',
    edit('address: 192.0.2.10 }', 'address: 192.0.2.10, target: a.example.test }'),
    'services[0].endpoints[0]',
    'an endpoint has exactly one of "address" or "target"',
  ],
  ['admin token too short', `${BASE}listeners: { admin: { token: short } }\n`, 'listeners.admin.token', 'an admin token has at least 16 characters'],
  [
    'zone defined twice',
    edit('datacenters:', '  - name: example.test\n    soa: { mname: a.example.test, rname: b.example.test }\n    ns: [ns1.example.test]\ndatacenters:'),
    'zones[1].name',
    'zone "example.test" is defined twice (first defined at zones[0].name, line 3:11)',
  ],
  [
    'YAML syntax error with line:column',
    edit('ns: [ns1.example.test]', 'ns: [ns1.example.test'),
    'line 6:5',
    'YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
  ],
  ['YAML duplicate key', edit(RECORD, 'service: web, service: x }'), 'line 15:54', 'YAML: Map keys must be unique'],
];

for (const [title, text, path, message] of errorCases) {
  test(`rejects: ${title}`, (t) => {
    t.deepEqual(problems(text), [{ path, message }]);
  });
}

test('every problem is reported, not only the first', (t) => {
  const text = edit('EU.NL', 'EU..NL', edit(RECORD, 'service: web, ttl: -5, bogus: 1 }'));
  t.deepEqual(
    problems(text)
      .map((p) => p.path)
      .sort(),
    ['datacenters[0].location', 'records[0].bogus', 'records[0].ttl'],
  );
});

test('ConfigError prints one line per problem as FILE:LINE:COL: path: reason', (t) => {
  const e = t.throws(() => parseConfigText(`${BASE}bogus: 1\nother: 2\n`, 'my.yaml'), { instanceOf: ConfigError });
  t.is(e.message, `my.yaml:16:1: bogus: ${UNKNOWN_KEY}\nmy.yaml:17:1: other: ${UNKNOWN_KEY}`);
});

test('loadConfigFile names an unreadable file', (t) => {
  const e = t.throws(() => loadConfigFile('/nonexistent/gslbd.yaml'), { instanceOf: ConfigError });
  t.is(e.problems.length, 1);
  t.is(e.problems[0]!.path, '');
  t.regex(e.problems[0]!.message, /^cannot read: ENOENT/);
});

test('TTL 2^31 − 1 is the largest accepted', (t) => {
  t.is(parseConfigText(edit(RECORD, 'service: web, ttl: 2147483647 }')).records[0]!.ttl, 2147483647);
});

test('JSON is accepted (YAML 1.2 is a superset)', (t) => {
  const json = JSON.stringify({
    zones: [{ name: 'example.test', soa: { mname: 'ns1.example.test', rname: 'h.example.test' }, ns: ['ns1.example.test'] }],
  });
  t.is(parseConfigText(json).zones[0]!.name, 'example.test');
});

test('names are canonical: lower case, no trailing dot, IDN as A-labels', (t) => {
  const c = parseConfigText(edit('www.example.test', 'WWW.Example.TEST.'));
  t.is(c.records[0]!.name, 'www.example.test');
  const idn = parseConfigText(BASE.replaceAll('example.test', 'bücher.test'));
  t.is(idn.zones[0]!.name, 'xn--bcher-kva.test');
});

test('formatPath writes indexes in brackets', (t) => {
  t.is(formatPath(['records', 2, 'policy', 'pickDcCount']), 'records[2].policy.pickDcCount');
  t.is(formatPath([]), '');
});

test('every example file validates', (t) => {
  const dir = new URL('../../../examples/', import.meta.url);
  const files = engineExampleFiles();
  t.true(files.includes('quickstart.yaml'));
  for (const f of files) t.notThrows(() => loadConfigFile(new URL(f, dir).pathname), f);
});

test('listeners accept port 0 (a free port chosen at bind time)', (t) => {
  const c = parseConfigText(`${BASE}listeners: { dns: [{ address: 127.0.0.1, port: 0 }], admin: { port: 0 } }\n`);
  t.is(c.listeners.dns[0]!.port, 0);
  t.is(c.listeners.admin!.port, 0);
});

test('a file written to disk loads with its path in messages', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, `${BASE}bogus: 1\n`);
  const e = t.throws(() => loadConfigFile(file), { instanceOf: ConfigError });
  t.is(e.message, `${file}:16:1: bogus: ${UNKNOWN_KEY}`);
});

test('a Unicode owner clashes with the same name written as A-labels', (t) => {
  const text = edit(
    'www.example.test',
    'xn--bcher-kva.example.test',
    edit('data: 192.0.2.53 }', 'data: 192.0.2.53 }\n      - { name: Bücher, type: CNAME, data: x.example.test }'),
  );
  t.deepEqual(problems(text), [{ path: 'records[0].type', message: '"xn--bcher-kva.example.test" already has a CNAME; no other record may share its name' }]);
});

test('a YAML alias bomb ("billion laughs") is a ConfigError naming the file, not a raw exception', (t) => {
  const levels = Array.from(
    { length: 10 },
    (_, i) =>
      `x${i}: &x${i} [${
        i === 0
          ? '1,1,1,1,1,1,1,1,1'
          : Array(9)
              .fill(`*x${i - 1}`)
              .join(',')
      }]`,
  );
  const e = t.throws(() => parseConfigText(levels.join('\n'), 'bomb.yaml'), { instanceOf: ConfigError });
  t.is(e?.message, 'bomb.yaml: YAML: Excessive alias count indicates a resource exhaustion attack');
});
