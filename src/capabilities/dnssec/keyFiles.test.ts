import test from 'ava';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { presentData } from '../../core/dns/presentation.js';
import { ALGORITHMS } from './algorithms.js';
import { dsOf } from './dnskey.js';
import { checkKeyFiles } from './keyFileChecks.js';
import { parseKeyTime, readKeyPair } from './keyFiles.js';
import { generateKey } from './keyGeneration.js';
import type { DnssecConfig } from './dnssecSchema.js';

/** BIND's key files in and out: what dnssec-keygen writes gslbd reads, and what gslbd writes BIND's tools read. */

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function bind(tool: string, args: string[]): string {
  try {
    return execFileSync(tool, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${tool} is not installed: run \`bash test/setup.sh\` (Debian package bind9-utils)`);
    throw e;
  }
}

test('an ECDSA P-256 scalar with leading zero octets, written without them as BIND does (OpenSSL bignum: one dnssec-keygen key in 256), is read', (t) => {
  // Seen in CI: dnssec-keygen wrote a 31-octet PrivateKey and the reader refused it.
  const dir = tempDir(t);
  const algorithm = ALGORITHMS.get(13)!;
  const timing = { created: 1767225600, publish: 1767225600, activate: 1767312000, inactive: 1769904000, delete: 1772323200, syncPublish: 1767312000 };
  let key = generateKey({ zone: 'example.test', algorithm, ksk: false, timing, ttl: 3600 });
  const scalar = (k: typeof key): Buffer => Buffer.from(/^PrivateKey: (\S+)$/m.exec(k.privateFile)![1]!, 'base64');
  // A key whose first octet is zero: about one in 256; 20,000 tries miss with probability e^-78.
  for (let i = 0; i < 20_000 && scalar(key)[0] !== 0; i++) key = generateKey({ zone: 'example.test', algorithm, ksk: false, timing, ttl: 3600 });
  const full = scalar(key);
  t.is(full.length, 32);
  t.is(full[0], 0);
  let short = full;
  while (short[0] === 0) short = short.subarray(1);
  writeFileSync(join(dir, `${key.baseName}.key`), key.publicFile);
  writeFileSync(join(dir, `${key.baseName}.private`), key.privateFile.replace(/^PrivateKey: \S+$/m, `PrivateKey: ${short.toString('base64')}`), {
    mode: 0o600,
  });
  const read = readKeyPair(join(dir, key.baseName), 'example.test').key;
  t.is(read.keyTag, key.keyTag);
  t.deepEqual(read.dnskey, key.dnskey);
  t.throws(() => algorithm.importPrivate(Buffer.alloc(33, 1)), { message: /1 to 32 octets, not 33/ });
});

for (const [mnemonic, number] of [
  ['ECDSAP256SHA256', 13],
  ['ED25519', 15],
] as const) {
  test(`dnssec-keygen's ${mnemonic} key pair is read: key tag of the file name, roles, timing, the DS dnssec-dsfromkey prints`, (t) => {
    const dir = tempDir(t);
    const ksk = bind('dnssec-keygen', [
      '-q',
      '-K',
      dir,
      '-a',
      mnemonic,
      '-f',
      'KSK',
      '-P',
      '20260101000000',
      '-A',
      '20260102000000',
      '-I',
      '20260201000000',
      '-D',
      '20260301000000',
      'example.test',
    ]);
    const zsk = bind('dnssec-keygen', ['-q', '-K', dir, '-a', mnemonic, '-L', '600', 'example.test']);
    const k = readKeyPair(join(dir, ksk), 'example.test').key;
    t.is(k.algorithm.number, number);
    t.is(`Kexample.test.+${String(number).padStart(3, '0')}+${String(k.keyTag).padStart(5, '0')}`, ksk);
    t.true(k.ksk);
    t.deepEqual(
      [k.timing.publish, k.timing.activate, k.timing.inactive, k.timing.delete],
      ['20260101000000', '20260102000000', '20260201000000', '20260301000000'].map(parseKeyTime),
    );
    const z = readKeyPair(join(dir, `${zsk}.private`), 'example.test').key;
    t.false(z.ksk);
    t.is(z.ttl, 600);
    t.is(`example.test. IN DS ${presentData('DS', dsOf('example.test', k.dnskey))}`, bind('dnssec-dsfromkey', ['-2', join(dir, `${ksk}.key`)]));
  });

  test(`gslbd's ${mnemonic} key files are BIND's: dnssec-dsfromkey and dnssec-settime read them, and the pair reads back`, (t) => {
    const dir = tempDir(t);
    const algorithm = ALGORITHMS.get(number)!;
    const timing = { created: 1767225600, publish: 1767225600, activate: 1767312000, inactive: 1769904000, delete: 1772323200, syncPublish: 1767312000 };
    const key = generateKey({ zone: 'example.test', algorithm, ksk: true, timing, ttl: 3600 });
    writeFileSync(join(dir, `${key.baseName}.key`), key.publicFile);
    writeFileSync(join(dir, `${key.baseName}.private`), key.privateFile, { mode: 0o600 });
    t.is(bind('dnssec-dsfromkey', ['-2', join(dir, `${key.baseName}.key`)]), `example.test. IN DS ${presentData('DS', dsOf('example.test', key.dnskey))}`);
    const settime = bind('dnssec-settime', ['-u', '-p', 'all', join(dir, key.baseName)]);
    t.regex(settime, /^Publish: 1767225600$/m);
    t.regex(settime, /^Activate: 1767312000$/m);
    t.regex(settime, /^Inactive: 1769904000$/m);
    t.regex(settime, /^Delete: 1772323200$/m);
    t.regex(settime, /^SYNC Publish: 1767312000$/m);
    const back = readKeyPair(join(dir, key.baseName), 'example.test').key;
    t.is(back.keyTag, key.keyTag);
    t.deepEqual(back.timing, timing);
    t.is(back.ttl, 3600);
  });
}

test('the key-file check refuses what cannot sign and warns about what should not be', (t) => {
  const dir = tempDir(t);
  const good = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ECDSAP256SHA256', 'example.test']);
  const other = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ECDSAP256SHA256', 'other.test']);
  const rsa = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'RSASHA256', '-b', '1024', 'example.test']);
  const noPrivate = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ED25519', 'example.test']);
  unlinkSync(join(dir, `${noPrivate}.private`));
  const halfEmpty = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ED25519', 'example.test']);
  writeFileSync(join(dir, `${halfEmpty}.private`), readFileSync(join(dir, `${halfEmpty}.private`), 'utf8').replace(/^PrivateKey:.*\n/m, ''));
  // The private half of one key with the public half of another.
  const mixed = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ECDSAP256SHA256', 'example.test']);
  writeFileSync(join(dir, `${mixed}.private`), readFileSync(join(dir, `${good}.private`)));
  const open = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ED25519', 'example.test']);
  chmodSync(join(dir, `${open}.private`), 0o644);
  const config: DnssecConfig = {
    zones: [{ zone: 'example.test', keys: [good, other, rsa, noPrivate, halfEmpty, mixed, open, `${good}.key`], dnskeyTtl: 3600, cds: true }],
    signatures: { validity: 691200, jitter: 0, refresh: 172800, inceptionOffset: 3600 },
    signatureCacheEntries: 10,
  };
  const report = checkKeyFiles(config, join(dir, 'gslbd.yaml'), Math.floor(Date.now() / 1000));
  const problems = report.problems.map((p) => `${p.path}: ${p.message.replace(dir, 'DIR')}`);
  t.is(problems.length, 6, problems.join('\n'));
  t.regex(problems[0]!, /^dnssec\.zones\[0\]\.keys\[1\]: .*the key is for "other\.test", not for the zone "example\.test"$/);
  t.regex(problems[1]!, /^dnssec\.zones\[0\]\.keys\[2\]: .*algorithm 8 is not supported \(13 ECDSAP256SHA256 and 15 ED25519 are\)$/);
  t.regex(problems[2]!, /^dnssec\.zones\[0\]\.keys\[3\]: cannot read .*\.private: ENOENT$/);
  t.regex(problems[3]!, /^dnssec\.zones\[0\]\.keys\[4\]: .*\.private: PrivateKey is missing/);
  t.regex(problems[4]!, /^dnssec\.zones\[0\]\.keys\[5\]: .*the private key does not belong to the public key$/);
  t.regex(problems[5]!, /^dnssec\.zones\[0\]\.keys\[7\]: the key .* is listed twice$/);
  t.deepEqual(
    report.warnings.map((w) => w.path),
    ['dnssec.zones[0].keys[6]'],
  );
  t.regex(report.warnings[0]!.message, /\.private is readable by every user \(chmod 600 it\)$/);
});

test('a zone none of whose keys is active now is a warning, not a problem', (t) => {
  const dir = tempDir(t);
  const later = bind('dnssec-keygen', ['-q', '-K', dir, '-a', 'ED25519', '-P', '+1d', '-A', '+2d', 'example.test']);
  const config: DnssecConfig = {
    zones: [{ zone: 'example.test', keys: [later], dnskeyTtl: 3600, cds: true }],
    signatures: { validity: 691200, jitter: 0, refresh: 172800, inceptionOffset: 3600 },
    signatureCacheEntries: 10,
  };
  const report = checkKeyFiles(config, join(dir, 'gslbd.yaml'), Math.floor(Date.now() / 1000));
  t.deepEqual(report.problems, []);
  t.deepEqual(
    report.warnings.map((w) => [w.path, w.message]),
    [['dnssec.zones[0].keys', 'no key of example.test is active now: its answers go unsigned until one is']],
  );
});
