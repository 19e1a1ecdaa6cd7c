import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { algorithmOf } from '../capabilities/dnssec/algorithms.js';
import { dsOf } from '../capabilities/dnssec/dnskey.js';
import { keyBasePath, parseKeyTime, parsePublicKeyFile, type KeyTiming } from '../capabilities/dnssec/keyFiles.js';
import { generateKey } from '../capabilities/dnssec/keyGeneration.js';
import { configuredName } from '../core/dns/name.js';
import { presentData } from '../core/dns/presentation.js';

/** An error in the command line (exit code 1). */
class UsageError extends Error {}

/** Seconds per unit of a BIND time offset (`+1h`, `-30d`, `+2mo`; no unit: seconds). */
const OFFSET_UNITS: Readonly<Record<string, number>> = { '': 1, s: 1, mi: 60, h: 3600, d: 86400, w: 604800, mo: 2592000, y: 31536000 };

/**
 * A time argument as dnssec-keygen reads it: `YYYYMMDD`, `YYYYMMDDHHMMSS` (UTC), `now`, an offset
 * from now (`+3h`, `-1d`; units y, mo, w, d, h, mi, s), or `none` (not set).
 * @returns seconds since the epoch, or undefined for `none`.
 * @throws UsageError for anything else.
 */
export function parseTimeArgument(text: string, now: number): number | undefined {
  if (text === 'none') return undefined;
  if (text === 'now') return now;
  const offset = /^([+-])(\d+)(y|mo|w|d|h|mi|s|)$/.exec(text);
  if (offset) return now + (offset[1] === '-' ? -1 : 1) * Number(offset[2]) * OFFSET_UNITS[offset[3]!]!;
  const t = parseKeyTime(/^\d{8}$/.test(text) ? `${text}000000` : text);
  if (t === undefined) throw new UsageError(`"${text}" is not a time (YYYYMMDD[HHMMSS], now, +/-offset, none)`);
  return t;
}

/** Options of `gslbd dnssec keygen`, as commander hands them over. */
interface KeygenOptions {
  algorithm: string;
  ksk?: boolean;
  directory: string;
  ttl?: string;
  publish?: string;
  activate?: string;
  inactive?: string;
  delete?: string;
  syncPublish?: string;
  syncDelete?: string;
}

/**
 * `gslbd dnssec keygen` (BIND-style key files, as `dnssec-keygen` writes them) and `gslbd dnssec
 * ds` (the DS records for the parent zone, as `dnssec-dsfromkey -2` prints them); docs/PRODUCT.md
 * §7, added to the `dnssec` command main.ts created. Exit codes as the rest of the CLI: 0 success,
 * 1 invalid input, 2 runtime failure.
 */
export function registerDnssecCommands(dnssec: Command): void {
  dnssec
    .command('keygen')
    .description("generate a key pair K<zone>.+<alg>+<tag>.key/.private (as dnssec-keygen); prints the base name, and a KSK's DS on stderr")
    .argument('<zone>', 'the zone the key signs')
    .option('-a, --algorithm <algorithm>', 'ECDSAP256SHA256 (13) or ED25519 (15)', 'ECDSAP256SHA256')
    .option('-f, --ksk', 'a key-signing key (flags 257, the SEP bit); else a zone-signing key (256)')
    .option('-K, --directory <dir>', 'directory to write the files into', '.')
    .option('-L, --ttl <seconds>', 'DNSKEY TTL written into the .key record')
    .option('-P, --publish <time>', 'publication time (default: now); times: YYYYMMDD[HHMMSS] UTC, now, +/-offset (y mo w d h mi s), none')
    .option('-A, --activate <time>', 'activation time (default: now)')
    .option('-I, --inactive <time>', 'inactivation time: stops signing')
    .option('-D, --delete <time>', 'deletion time: leaves the DNSKEY RRset')
    .option('--sync-publish <time>', 'when CDS/CDNSKEY of the key are published (dnssec-keygen -P sync)')
    .option('--sync-delete <time>', 'when they are withdrawn (dnssec-keygen -D sync)')
    .action((zoneArg: string, opts: KeygenOptions) => {
      try {
        let zone: string;
        try {
          zone = configuredName(zoneArg);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        const algorithm = algorithmOf(opts.algorithm);
        if (!algorithm) throw new UsageError(`algorithm "${opts.algorithm}" is not supported: ECDSAP256SHA256 (13) or ED25519 (15)`);
        if (opts.ttl !== undefined && !/^\d+$/.test(opts.ttl)) throw new UsageError(`TTL "${opts.ttl}" is not a number of seconds`);
        const now = Math.floor(Date.now() / 1000);
        const time = (text: string | undefined, fallback?: number): number | undefined => (text === undefined ? fallback : parseTimeArgument(text, now));
        const timing: KeyTiming = {
          created: now,
          publish: time(opts.publish, now),
          activate: time(opts.activate, now),
          inactive: time(opts.inactive),
          delete: time(opts.delete),
          syncPublish: time(opts.syncPublish),
          syncDelete: time(opts.syncDelete),
        };
        // A key tag already used by a key file there is avoided, as dnssec-keygen does.
        let key = generateKey({ zone, algorithm, ksk: opts.ksk === true, timing, ttl: opts.ttl === undefined ? undefined : Number(opts.ttl) });
        while (existsSync(join(opts.directory, `${key.baseName}.key`)) || existsSync(join(opts.directory, `${key.baseName}.private`))) {
          key = generateKey({ zone, algorithm, ksk: opts.ksk === true, timing, ttl: opts.ttl === undefined ? undefined : Number(opts.ttl) });
        }
        writeFileSync(join(opts.directory, `${key.baseName}.key`), key.publicFile, { mode: 0o644, flag: 'wx' });
        writeFileSync(join(opts.directory, `${key.baseName}.private`), key.privateFile, { mode: 0o600, flag: 'wx' });
        process.stdout.write(`${key.baseName}\n`);
        if (opts.ksk) process.stderr.write(`; DS for the parent zone of ${zone || '.'}:\n${zone}. IN DS ${presentData('DS', dsOf(zone, key.dnskey))}\n`);
      } catch (e) {
        process.stderr.write(`gslbd dnssec keygen: ${(e as Error).message}\n`);
        process.exit(e instanceof UsageError ? 1 : 2);
      }
    });

  dnssec
    .command('ds')
    .description('print the DS record (SHA-256) of each key for its parent zone, as dnssec-dsfromkey -2')
    .argument('<keys...>', 'key files (K<zone>.+<alg>+<tag>, with or without .key)')
    .action((files: string[]) => {
      try {
        for (const file of files) {
          let text: string;
          try {
            text = readFileSync(`${keyBasePath(file)}.key`, 'utf8');
          } catch (e) {
            throw new UsageError(`cannot read ${keyBasePath(file)}.key: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
          }
          let key;
          try {
            key = parsePublicKeyFile(text);
          } catch (e) {
            throw new UsageError(`${keyBasePath(file)}.key: ${(e as Error).message}`);
          }
          process.stdout.write(`${key.owner}. IN DS ${presentData('DS', dsOf(key.owner, key.dnskey))}\n`);
        }
      } catch (e) {
        process.stderr.write(`gslbd dnssec ds: ${(e as Error).message}\n`);
        process.exit(e instanceof UsageError ? 1 : 2);
      }
    });
}
