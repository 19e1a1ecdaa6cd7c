import { dirname, resolve } from 'node:path';
import type { ConfigProblem } from '../../core/config/load.js';
import type { DnssecConfig } from './dnssecSchema.js';
import { readKeyPair, type DnssecKey } from './keyFiles.js';
import { isActive } from './zoneKeys.js';

/** What checking the key files found: problems refuse the configuration, warnings do not. */
export interface KeyFileReport {
  readonly problems: ConfigProblem[];
  readonly warnings: ConfigProblem[];
  /** The keys read, per `dnssec.zones[i]` (empty lists where a key failed). */
  readonly keys: readonly (readonly DnssecKey[])[];
}

/**
 * Reads every key file of the `dnssec` section, as `gslbd check-config`, start-up and every
 * reload do (paths relative to the configuration file). Problems, with their configuration path:
 * a missing or unreadable `.key` or `.private` file, a private file without its private key, an
 * algorithm gslbd does not sign with (13 and 15), a key of another zone, a private key that does
 * not belong to the public key, the same key twice. Warnings: a `.private` file every user may
 * read (mode o+r), and a zone none of whose keys signs now (`now`, seconds since the epoch).
 */
export function checkKeyFiles(dnssec: DnssecConfig, configFile: string, now: number): KeyFileReport {
  const base = dirname(configFile);
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  const keys = dnssec.zones.map((z, i) => {
    const zoneKeys: DnssecKey[] = [];
    z.keys.forEach((path, j) => {
      const where = `dnssec.zones[${i}].keys[${j}]`;
      try {
        const { key, worldReadable } = readKeyPair(resolve(base, path), z.zone);
        if (zoneKeys.some((k) => k.keyTag === key.keyTag && k.dnskey.publicKey.equals(key.dnskey.publicKey))) {
          problems.push({ path: where, message: `the key ${path} is listed twice` });
          return;
        }
        if (worldReadable) warnings.push({ path: where, message: `${key.file}.private is readable by every user (chmod 600 it)` });
        zoneKeys.push(key);
      } catch (e) {
        problems.push({ path: where, message: (e as Error).message });
      }
    });
    if (zoneKeys.length === z.keys.length && !zoneKeys.some((k) => isActive(k.timing, now))) {
      warnings.push({ path: `dnssec.zones[${i}].keys`, message: `no key of ${z.zone} is active now: its answers go unsigned until one is` });
    }
    return zoneKeys;
  });
  return { problems, warnings, keys };
}
