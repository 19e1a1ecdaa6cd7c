import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './load.js';
import { parseConfigText } from '../../process/loadConfig.js';
import { fileProblemsOfValidSections } from '../../process/fileReferences.js';

/**
 * Configuration ergonomics: `file:line:col` on every problem (schema, unknown key, YAML), in a
 * 2,000-line file too; YAML merge keys; TTLs with BIND units; the files of the sections that
 * passed the schema reported with the schema problems.
 */

const ZONE = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test }
    ns: [ns1.example.test]
    records:
`;

function error(text: string): ConfigError {
  try {
    parseConfigText(text, 'big.yaml');
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

test('a problem in a 2,000-line file names file:line:col of the value', (t) => {
  const lines = Array.from({ length: 1990 }, (_, i) => `      - { name: h${i}, type: A, data: 192.0.2.${(i % 250) + 1} }`);
  lines[1500] = '      - { name: h1500, type: A, data: 192.0.2.300 }';
  const text = `${ZONE}${lines.join('\n')}\n`;
  t.true(text.split('\n').length > 1995);
  const e = error(text);
  t.is(e.problems.length, 1);
  // Line 6 is the first record: record 1500 is on line 1506; its `data` value starts at column 39.
  t.like(e.problems[0], { path: 'zones[0].records[1500].data', line: 1506, col: 39 });
  t.regex(e.message, /^big\.yaml:1506:39: zones\[0\]\.records\[1500\]\.data: /);
});

test('an unknown key points at the key; a missing one at the object that lacks it; YAML errors keep theirs', (t) => {
  const unknown = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1 }\ndatacenters:\n  - { name: a, colour: blue }\n`);
  t.like(unknown.problems[0], { path: 'datacenters[0].colour', line: 8, col: 16 });
  const missing = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1 }\nservices:\n  - endpoints: []\n`);
  t.like(missing.problems[0], { path: 'services[0].name', line: 8, col: 5 });
  const yaml = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1\n`);
  t.is(yaml.problems[0]!.line !== undefined, true);
  t.regex(yaml.message, /^big\.yaml:\d+:\d+: YAML: /);
});

test('YAML merge keys: a shared block merged into several entries', (t) => {
  const merged = parseConfigText(
    `${ZONE}      - { name: a, type: A, data: 192.0.2.1 }
datacenters: [{ name: a }, { name: b }]
services:
  - name: web
    endpoints:
      - &first { dc: a, address: 192.0.2.1, weight: 5, priority: 2 }
      - { <<: *first, dc: b, address: 192.0.2.2 }
`,
    'merge.yaml',
  );
  t.like(merged.services[0]!.endpoints[1], { dc: 'b', address: '192.0.2.2', weight: 5, priority: 2 });
});

test('TTLs with BIND units: 1h, 1h30m, 2d, 1w, plain seconds as text; bad units are named', (t) => {
  const ttl = (v: string): number => parseConfigText(`${ZONE}      - { name: a, type: A, data: 192.0.2.1, ttl: ${v} }\n`).zones[0]!.records[0]!.ttl!;
  t.is(ttl('1h'), 3600);
  t.is(ttl('1h30m'), 5400);
  t.is(ttl('2D'), 172800);
  t.is(ttl('1w'), 604800);
  t.is(ttl('"300"'), 300);
  t.is(ttl('300'), 300);
  const bad = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1, ttl: 1y }\n`);
  t.like(bad.problems[0], { path: 'zones[0].records[0].ttl', message: 'expected seconds, or a TTL with units such as 1h, 1h30m, 2d (w, d, h, m, s)' });
  const big = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1, ttl: 100000w }\n`);
  t.like(big.problems[0], { path: 'zones[0].records[0].ttl' });
  t.regex(big.problems[0]!.message, /<=2147483647/);
  const negative = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1, ttl: -1 }\n`);
  t.like(negative.problems[0], { path: 'zones[0].records[0].ttl', message: 'Too small: expected number to be >=0' });
});

test('one check lists the schema problems and the missing files of the sections that passed', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-positions-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'gslbd.yaml');
  const text = `listeners: { admin: { tokenFile: missing-token } }
geo: { compiled: missing.gdb }
${ZONE}      - { name: a, type: A, data: 192.0.2.300 }
`;
  writeFileSync(file, text);
  const e = error(text);
  t.deepEqual(
    e.problems.map((p) => p.path),
    ['zones[0].records[0].data'],
  );
  t.deepEqual(
    fileProblemsOfValidSections(e.data, file).map((p) => p.path),
    ['geo.compiled', 'listeners.admin.tokenFile'],
  );
});

test('a duplicate definition names both places', (t) => {
  const e = error(`${ZONE}      - { name: a, type: A, data: 192.0.2.1 }
datacenters:
  - { name: east }
  - { name: west }
  - { name: east }
`);
  t.like(e.problems[0], {
    path: 'datacenters[2].name',
    line: 10,
    message: 'data center "east" is defined twice (first defined at datacenters[0].name, line 8:13)',
  });
});
