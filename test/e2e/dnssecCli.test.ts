import test from 'ava';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, REPO_ROOT } from '../support/engineProcess.js';
import { makeKeys } from '../support/dnssecKeys.js';
import { EXAMPLE_ZONE } from '../support/exampleZone.js';

/**
 * `gslbd dnssec keygen|ds` and `gslbd check-config` on DNSSEC key files, as an operator runs them,
 * with BIND's tools (bind9-utils) as the reference: the DS gslbd prints is the one
 * `dnssec-dsfromkey -2` prints, and check-config refuses what cannot sign and warns about a
 * world-readable private key.
 */

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function gslbd(args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, timeout: 60000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

test('keygen writes BIND key files (private 0600) whose DS gslbd and dnssec-dsfromkey print alike', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const algorithm of ['ECDSAP256SHA256', 'ED25519']) {
    const made = await gslbd(['dnssec', 'keygen', '-K', dir, '-a', algorithm, '-f', 'example.test']);
    t.is(made.code, 0, made.stderr);
    const base = made.stdout.trim();
    t.regex(base, /^Kexample\.test\.\+0(13|15)\+\d{5}$/);
    t.is(statSync(join(dir, `${base}.private`)).mode & 0o777, 0o600);
    const ours = await gslbd(['dnssec', 'ds', join(dir, base)]);
    t.is(ours.code, 0, ours.stderr);
    const bind = execFileSync('dnssec-dsfromkey', ['-2', join(dir, `${base}.key`)], { encoding: 'utf8' });
    t.is(ours.stdout.trim(), bind.trim());
    t.true(made.stderr.includes(bind.trim()), 'keygen -f prints the KSK’s DS on stderr');
  }
  t.is((await gslbd(['dnssec', 'keygen', '-a', 'RSASHA256', 'example.test'])).code, 1, 'an algorithm gslbd does not sign with is a usage error');
});

test('check-config reads the key files: refuses a key of another zone and a missing private part, warns about a world-readable one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-dnssec-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [ksk, zsk] = makeKeys(dir, 'example.test', [{ ksk: true }, {}]);
  const [other] = makeKeys(dir, 'other.test', [{}]);
  const config = (keys: string[]): string => `${EXAMPLE_ZONE}\ndnssec:\n  zones:\n    - { zone: example.test, keys: [${keys.join(', ')}] }\n`;
  const file = join(dir, 'gslbd.yaml');

  writeFileSync(file, config([ksk!.base, zsk!.base]));
  const good = await gslbd(['check-config', file]);
  t.is(good.code, 0, good.stderr);
  t.is(good.stderr, '');

  chmodSync(join(dir, `${zsk!.base}.private`), 0o644);
  const readable = await gslbd(['check-config', file]);
  t.is(readable.code, 0, readable.stderr);
  t.regex(readable.stderr, /warning: dnssec\.zones\[0\]\.keys\[1\]: .*readable by every user/);

  writeFileSync(file, config([ksk!.base, other!.base]));
  const wrongZone = await gslbd(['check-config', file]);
  t.is(wrongZone.code, 1);
  t.regex(wrongZone.stderr, /dnssec\.zones\[0\]\.keys\[1\].*not for the zone "example\.test"/);

  writeFileSync(join(dir, `${ksk!.base}.private`), 'Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\n');
  writeFileSync(file, config([ksk!.base]));
  const noPrivate = await gslbd(['check-config', file]);
  t.is(noPrivate.code, 1);
  t.regex(noPrivate.stderr, /dnssec\.zones\[0\]\.keys\[0\].*PrivateKey is missing/);
});
