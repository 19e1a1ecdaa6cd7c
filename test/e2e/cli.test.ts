import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { fixtureConfig, fixtureLocationFiles } from '../support/fixtureDeployment.js';
import { replaceOnce } from '../support/replaceOnce.js';
import { engineExampleFiles } from '../support/exampleConfigs.js';

/** The `gslbd` command line: check-config exit codes and messages, schema, serve failures. */

interface Run {
  /** Exit code, or `signal NAME` when the process was killed (e.g. by the timeout). */
  readonly code: number | string;
  readonly stdout: string;
  readonly stderr: string;
}

/** At most this many CLI processes at once: ava runs the tests concurrently on a shared 2-core machine. */
const MAX_CONCURRENT = 2;
let active = 0;
const queue: (() => void)[] = [];

async function gslbd(args: readonly string[]): Promise<Run> {
  if (active >= MAX_CONCURRENT) await new Promise<void>((r) => queue.push(r));
  active++;
  try {
    return await new Promise((resolve) => {
      execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 90000 }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : `signal ${err.signal}`) : 0;
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    active--;
    queue.shift()?.();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'gslbd-cli-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** Every gslbd configuration under examples/, relative to the repository. */
const examples = engineExampleFiles().map((f) => `examples/${f}`);

test('check-config accepts the quickstart with a summary, exit 0', async (t) => {
  const r = await gslbd(['check-config', 'examples/quickstart.yaml']);
  t.deepEqual(r, { code: 0, stdout: 'examples/quickstart.yaml: OK (1 zones, 3 data centers, 1 services, 1 GSLB records)\n', stderr: '' });
});

test('check-config accepts every example file (round trip of examples/), exit 0', async (t) => {
  t.true(examples.includes('examples/quickstart.yaml'));
  for (const f of examples) {
    const each = await gslbd(['check-config', f]);
    t.is(each.code, 0, `${f}: ${each.stderr}`);
  }
});

test('check-config on a bad file: exit 1, one path-named message per problem', async (t) => {
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, replaceOnce(replaceOnce(fixtureConfig(), '    service: web\n', '    service: webx\n    bogus: 1\n'), 'Europe.NL', 'Europe..NL'));
  const r = await gslbd(['check-config', file]);
  t.is(r.code, 1);
  t.is(r.stdout, '');
  t.deepEqual(r.stderr.trimEnd().split('\n').sort(), [
    `${file}:63:27: datacenters[0].location: location "Europe..NL" qualifier 2 is empty`,
    `${file}:77:5: records[0].bogus: unknown key (not part of the configuration schema; check the spelling)`,
  ]);
});

test('check-config reports cross-reference problems once the shape is valid', async (t) => {
  const file = join(dir, 'xref.yaml');
  writeFileSync(file, replaceOnce(fixtureConfig(), '    service: web\n', '    service: webx\n'));
  const r = await gslbd(['check-config', file]);
  t.deepEqual([r.code, r.stderr], [1, `${file}:76:14: records[0].service: unknown service "webx"\n`]);
});

test('check-config lists schema, reference, zone-file and file problems together, a zone file record by its line', async (t) => {
  const sub = mkdtempSync(join(dir, 'together-'));
  writeFileSync(join(sub, 'zone.txt'), '$TTL 300\n@ SOA ns1 hostmaster 1 2 3 4 5\n@ NS ns1\nns1 A 192.0.2.1\nwww A 192.0.2.2\n  CNAME ns1\nbad A 1.2.3\n');
  const file = join(sub, 'gslbd.yaml');
  writeFileSync(
    file,
    [
      'listeners:',
      '  admin: { address: 127.0.0.1, port: 8081, tokenFile: missing.token }',
      'zones:',
      '  - { name: example.test, zoneFile: zone.txt }',
      'datacenters: [{ name: fra1, location: EU.DE }]',
      'services: [{ name: web, endpoints: [{ dc: fra1, address: 192.0.2.10 }] }]',
      'records:',
      '  - { name: app.example.test, type: A, ttl: -5, service: web, policy: { type: static, rules: [{ dcs: [fra1] }] } }',
      'dnssec:',
      '  zones: [{ zone: example.test, keys: [Kexample.test.+013+12345] }]',
      '',
    ].join('\n'),
  );
  const r = await gslbd(['check-config', file]);
  t.is(r.code, 1);
  t.deepEqual(r.stderr.trimEnd().split('\n'), [
    `${file}: zones[0].zoneFile: zone.txt:7: A: "1.2.3" is not an IPv4 address`,
    `${file}:8:45: records[0].ttl: Too small: expected number to be >=0`,
    `${file}: zones[0].zoneFile: zone.txt:6:3: a CNAME cannot share the name "www.example.test" with other records`,
    `${file}: listeners.admin.tokenFile: cannot read "missing.token": ENOENT`,
    `${file}: dnssec.zones[0].keys[0]: cannot read ${join(sub, 'Kexample.test.+013+12345.key')}: ENOENT`,
  ]);
});

test('check-config on a missing file: exit 1 with the reason', async (t) => {
  const r = await gslbd(['check-config', join(dir, 'missing.yaml')]);
  t.is(r.code, 1);
  t.regex(r.stderr, /missing\.yaml: cannot read: ENOENT/);
});

test('schema prints JSON Schema with additionalProperties: false on every object', async (t) => {
  const r = await gslbd(['schema']);
  t.is(r.code, 0);
  const schema = JSON.parse(r.stdout) as Record<string, unknown>;
  t.is(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  const sections = Object.keys(schema.properties as object);
  for (const key of ['listeners', 'dns', 'geo', 'logging', 'zones', 'datacenters', 'services', 'records']) t.true(sections.includes(key), key);
  const open: string[] = [];
  let objects = 0;
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) node.forEach((n, i) => walk(n, `${path}[${i}]`));
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (o.type === 'object' && 'properties' in o) {
        objects++;
        if (o.additionalProperties !== false) open.push(path || '/');
      }
      for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
    }
  };
  walk(schema, '');
  t.deepEqual(open, []);
  t.true(objects >= 15, `${objects} object schemas`);
});

test("schema --agent prints the agent configuration file's JSON Schema", async (t) => {
  const r = await gslbd(['schema', '--agent']);
  t.is(r.code, 0, r.stderr);
  const schema = JSON.parse(r.stdout) as { $schema: string; properties: Record<string, unknown>; required: string[] };
  t.is(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  t.deepEqual(Object.keys(schema.properties).sort(), ['agent', 'engines', 'haproxy', 'host', 'logging', 'metrics', 'probes', 'prometheus', 'report']);
  t.deepEqual(schema.required.sort(), ['agent', 'engines']);
});

test('serve with an invalid file: exit 1 and the problems on stderr', async (t) => {
  const file = join(dir, 'serve-bad.yaml');
  writeFileSync(file, 'zones: []\n');
  const r = await gslbd(['serve', file]);
  t.deepEqual([r.code, r.stderr], [1, `gslbd: ${file}:1:8: zones: Too small: expected array to have >=1 items\n`]);
  // The same failure as one fatal JSON line on stdout, for the log pipeline.
  const fatal = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { level: number; exitCode: number; problems: { path: string; line: number }[] };
  t.like(fatal, { level: 60, exitCode: 1, problems: [{ path: 'zones', line: 1 }] });
});

test('serve on a port already in use: exit 2, and the Unix sockets that mean "loaded" never appear', async (t) => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  t.teardown(() => blocker.close());
  const port = (blocker.address() as { port: number }).port;
  for (const [name, content] of Object.entries(fixtureLocationFiles())) writeFileSync(join(dir, name), content);
  const file = join(dir, 'busy.yaml');
  writeFileSync(
    file,
    replaceOnce(
      fixtureConfig({ adminToken: null }),
      'admin: { address: 127.0.0.1, port: 0 }',
      `admin: { address: 127.0.0.1, port: ${port} }\n  powerdns: { path: busy-pdns.sock }\n  compact: { path: busy-compact.sock }`,
    ),
  );
  const r = await gslbd(['serve', file]);
  t.is(r.code, 2);
  t.regex(r.stderr, /^gslbd: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n$/);
  t.false(existsSync(join(dir, 'busy-pdns.sock')));
  t.false(existsSync(join(dir, 'busy-compact.sock')));
});

test('check-config and serve name every missing or unusable file with its key: exit 1', async (t) => {
  writeFileSync(join(dir, 'short-token.txt'), 'short\n');
  const file = join(dir, 'files.yaml');
  writeFileSync(
    file,
    (
      [
        ['admin: { address: 127.0.0.1, port: 0 }', 'admin: { address: 127.0.0.1, port: 0, tokenFile: short-token.txt }'],
        ['path: loc4.mmdb', 'path: /nonexistent/x.mmdb'],
        ['path: loc6.mmdb', 'package: no-such-package/x.mmdb'],
      ] as [string, string][]
    ).reduce((text, [from, to]) => replaceOnce(text, from, to), fixtureConfig({ adminToken: null })),
  );
  const expected = [
    `${file}: geo.sources[0].path: cannot read "/nonexistent/x.mmdb": ENOENT`,
    `${file}: geo.sources[1].package: "no-such-package/x.mmdb" is not an installed package file (npm install)`,
    `${file}: listeners.admin.tokenFile: "short-token.txt" holds fewer than 16 characters`,
  ];
  const check = await gslbd(['check-config', file]);
  t.deepEqual([check.code, check.stdout, check.stderr.trimEnd().split('\n')], [1, '', expected]);
  const serve = await gslbd(['serve', file]);
  t.deepEqual([serve.code, serve.stderr.trimEnd().split('\n')], [1, [`gslbd: ${expected[0]}`, ...expected.slice(1)]]);
});

test('one check-config run lists schema problems and the missing files of the sections that passed', async (t) => {
  const file = join(dir, 'both.yaml');
  writeFileSync(
    file,
    replaceOnce(replaceOnce(fixtureConfig(), 'path: loc4.mmdb', 'path: /nonexistent/x.mmdb'), '    service: web\n', '    service: web\n    bogus: 1\n'),
  );
  const r = await gslbd(['check-config', file]);
  t.is(r.code, 1);
  t.deepEqual(r.stderr.trimEnd().split('\n'), [
    `${file}:77:5: records[0].bogus: unknown key (not part of the configuration schema; check the spelling)`,
    `${file}: geo.sources[0].path: cannot read "/nonexistent/x.mmdb": ENOENT`,
  ]);
});

test('check-config on a compiled location file that is a directory: exit 1 naming geo.compiled', async (t) => {
  const file = join(dir, 'compiled-dir.yaml');
  writeFileSync(file, fixtureConfig({ adminToken: false }).replace(/  sources:\n.*\n.*\n/, '  compiled: .\n'));
  const r = await gslbd(['check-config', file]);
  t.deepEqual([r.code, r.stderr], [1, `${file}: geo.compiled: "." is not a regular file (a directory)\n`]);
});

test('an unknown command is an error', async (t) => {
  const r = await gslbd(['frobnicate']);
  t.is(r.code, 1);
  t.regex(r.stderr, /unknown command 'frobnicate'/);
});
