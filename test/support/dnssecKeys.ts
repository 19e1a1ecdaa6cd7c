import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALGORITHMS } from '../../src/capabilities/dnssec/algorithms.js';
import { formatKeyTime, parsePublicKeyFile, type KeyTiming } from '../../src/capabilities/dnssec/keyFiles.js';
import { generateKey } from '../../src/capabilities/dnssec/keyGeneration.js';
import { presentData } from '../../src/core/dns/presentation.js';

/** A key to make for a test zone. */
export interface TestKeySpec {
  /** A key-signing key (flags 257). */
  readonly ksk?: boolean;
  /** 13 (ECDSAP256SHA256, the default) or 15 (ED25519). */
  readonly algorithm?: 13 | 15;
  /** Timing metadata (seconds since the epoch); default: published and active from an hour ago. */
  readonly timing?: KeyTiming;
  /** `dnssec-keygen` (BIND's bind9-utils, the default: proves the files BIND writes are read) or `gslbd` (`generateKey`, as `gslbd dnssec keygen`). */
  readonly tool?: 'dnssec-keygen' | 'gslbd';
}

/** A key made for a test. */
export interface TestKey {
  /** File name of the pair without suffix, inside the directory (`Kexample.test.+013+12345`). */
  readonly base: string;
  readonly keyTag: number;
  readonly ksk: boolean;
  /** Its SHA-256 DS as BIND's `dnssec-dsfromkey -2` prints it (`example.test. IN DS …`), for trust anchors: computed by BIND, not by gslbd. */
  readonly ds: string;
  /** Its DNSKEY as a master-file line. */
  readonly dnskey: string;
}

/**
 * Makes key pairs for `zone` in `dir`, with BIND's `dnssec-keygen` (a missing binary fails the
 * test: `bash test/setup.sh` installs bind9-utils) or gslbd's own generator.
 */
export function makeKeys(dir: string, zone: string, specs: readonly TestKeySpec[]): TestKey[] {
  return specs.map((spec) => {
    const algorithm = ALGORITHMS.get(spec.algorithm ?? 13)!;
    const now = Math.floor(Date.now() / 1000);
    const timing = spec.timing ?? { created: now - 3600, publish: now - 3600, activate: now - 3600 };
    let base: string;
    if ((spec.tool ?? 'dnssec-keygen') === 'gslbd') {
      const key = generateKey({ zone, algorithm, ksk: spec.ksk === true, timing });
      writeFileSync(join(dir, `${key.baseName}.key`), key.publicFile);
      writeFileSync(join(dir, `${key.baseName}.private`), key.privateFile, { mode: 0o600 });
      base = key.baseName;
    } else {
      const flags = [
        ['-P', timing.publish],
        ['-A', timing.activate],
        ['-I', timing.inactive],
        ['-D', timing.delete],
      ].flatMap(([flag, t]) => (t === undefined ? [] : [flag as string, formatKeyTime(t as number)]));
      base = bind('dnssec-keygen', ['-q', '-K', dir, '-a', algorithm.mnemonic, ...(spec.ksk ? ['-f', 'KSK'] : []), ...flags, zone]);
    }
    const pub = parsePublicKeyFile(readFileSync(join(dir, `${base}.key`), 'utf8'));
    const ds = bind('dnssec-dsfromkey', ['-2', join(dir, `${base}.key`)]);
    return {
      base,
      keyTag: Number(/\+(\d+)$/.exec(base)![1]),
      ksk: spec.ksk === true,
      ds,
      dnskey: `${pub.owner}. IN DNSKEY ${presentData('DNSKEY', pub.dnskey)}`,
    };
  });
}

/** Runs one of BIND's tools and returns its trimmed output; a missing tool fails the test. */
function bind(tool: string, args: string[]): string {
  try {
    return execFileSync(tool, args, { encoding: 'utf8' }).trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${tool} is not installed: run \`bash test/setup.sh\` (Debian package bind9-utils)`);
    throw e;
  }
}
