import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FILE_SIZE_LIMITS } from '../core/config/regularFile.js';
import { fileReferenceProblems } from './fileReferences.js';
import { parseConfigText } from './loadConfig.js';

/**
 * Every file a configuration names (admin token file, monitors' CA files, compiled location data,
 * location sources) is checked to be a regular file under its cap before anything reads it, as
 * the configuration file itself is (`reloadPipeline.test.ts`): a FIFO would block the read, a
 * device never end it.
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-file-references-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const configFile = join(dir, 'gslbd.yaml');

const ZONE = `zones:
  - name: example.test
    soa: { mname: ns1.example.test, rname: hostmaster.example.test, serial: 1 }
    ns: [ns1.example.test]
`;

/** A configuration naming `file` at every place a configuration names a file. */
const naming = (file: string) =>
  parseConfigText(
    `listeners: { dns: [], admin: { port: 0, tokenFile: ${file} } }
geo: { compiled: ${file} }
health: { monitors: [{ name: tls, type: https, caFile: ${file} }] }
${ZONE}`,
    configFile,
  );
const namingSource = (file: string) => parseConfigText(`geo: { sources: [{ format: netscaler, path: ${file} }] }\n${ZONE}`, configFile);
const KEYS = ['geo.compiled', 'listeners.admin.tokenFile', 'health.monitors[0].caFile'];

test('a FIFO or a device named anywhere in the configuration is a problem at its key, found without reading it', (t) => {
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  for (const [file, kind] of [
    ['fifo', 'a FIFO'],
    ['/dev/zero', 'a character device'],
  ] as const) {
    const problems = fileReferenceProblems(naming(file), configFile);
    t.deepEqual(problems.map((p) => p.path).sort(), [...KEYS].sort(), file);
    t.true(
      problems.every((p) => p.message === `"${file}" is not a regular file (${kind})`),
      JSON.stringify(problems),
    );
    t.deepEqual(fileReferenceProblems(namingSource(file), configFile), [{ path: 'geo.sources[0].path', message: `"${file}" is not a regular file (${kind})` }]);
  }
});

test('a token file or CA file over its cap is a problem', (t) => {
  writeFileSync(join(dir, 'big-token'), 'x'.repeat(FILE_SIZE_LIMITS.token + 1));
  writeFileSync(join(dir, 'big-ca.pem'), 'x'.repeat(FILE_SIZE_LIMITS.monitor + 1));
  const config = parseConfigText(
    `listeners: { dns: [], admin: { port: 0, tokenFile: big-token } }
health: { monitors: [{ name: tls, type: https, caFile: big-ca.pem }] }
${ZONE}`,
    configFile,
  );
  t.deepEqual(fileReferenceProblems(config, configFile), [
    { path: 'listeners.admin.tokenFile', message: `"big-token" is ${FILE_SIZE_LIMITS.token + 1} bytes, more than the limit of ${FILE_SIZE_LIMITS.token}` },
    { path: 'health.monitors[0].caFile', message: `"big-ca.pem" is ${FILE_SIZE_LIMITS.monitor + 1} bytes, more than the limit of ${FILE_SIZE_LIMITS.monitor}` },
  ]);
});
