import { readFileSync, statSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { canonicalName } from '../../core/dns/name.js';
import type { DnskeyData } from '../../core/dns/records.js';
import { ALGORITHMS, type DnssecAlgorithm } from './algorithms.js';
import { keyTag, SEP_FLAG, ZONE_KEY_FLAG } from './dnskey.js';

/**
 * BIND's key files, as `dnssec-keygen` (Debian's bind9-utils) writes them and `gslbd dnssec
 * keygen` writes them too: `K<zone>.+<alg>+<tag>.key` holds the DNSKEY record (with the timing
 * metadata repeated as comments), `K<zone>.+<alg>+<tag>.private` the private key and the timing
 * metadata BIND reads (Private-key-format v1.3: `Created`, `Publish`, `Activate`, `Inactive`,
 * `Delete`, `SyncPublish`, `SyncDelete`, as `YYYYMMDDHHMMSS` UTC).
 */

/** When a key is used, in seconds since the epoch (BIND's timing metadata); absent = not set. */
export interface KeyTiming {
  readonly created?: number;
  /** From then on the key is in the DNSKEY RRset. */
  readonly publish?: number;
  /** From then on the key signs. */
  readonly activate?: number;
  /** From then on the key no longer signs (it stays published). */
  readonly inactive?: number;
  /** From then on the key is no longer published. */
  readonly delete?: number;
  /** From then on CDS and CDNSKEY of the key are published (RFC 7344). */
  readonly syncPublish?: number;
  /** From then on they are not. */
  readonly syncDelete?: number;
}

/** The timing fields in the order BIND writes them, with their names in key files. */
export const TIMING_FIELDS: readonly (readonly [keyof KeyTiming, string])[] = [
  ['created', 'Created'],
  ['publish', 'Publish'],
  ['activate', 'Activate'],
  ['inactive', 'Inactive'],
  ['delete', 'Delete'],
  ['syncPublish', 'SyncPublish'],
  ['syncDelete', 'SyncDelete'],
];

/** One key pair, read from its two files. */
export interface DnssecKey {
  /** The key's owner (the zone apex), canonical. */
  readonly zone: string;
  readonly algorithm: DnssecAlgorithm;
  readonly dnskey: DnskeyData;
  readonly keyTag: number;
  /** True for a key-signing key (SEP flag set). */
  readonly ksk: boolean;
  readonly privateKey: KeyObject;
  readonly timing: KeyTiming;
  /** The DNSKEY TTL the `.key` file sets (`dnssec-keygen -L`), if any. */
  readonly ttl: number | undefined;
  /** The base path (without `.key` / `.private`) the key was read from. */
  readonly file: string;
}

/** What the public `.key` file says. */
export interface PublicKeyFile {
  readonly owner: string;
  readonly ttl: number | undefined;
  readonly dnskey: DnskeyData;
}

/** What the `.private` file says. */
export interface PrivateKeyFile {
  readonly algorithm: number;
  readonly privateKey: Buffer;
  readonly timing: KeyTiming;
}

/** `Kexample.test.+013+12345` from a configured path that may end in `.key` or `.private`. */
export function keyBasePath(path: string): string {
  return path.replace(/\.(key|private)$/, '');
}

/**
 * Parses a `.key` file: comment lines (`;`) and one DNSKEY record `owner [ttl] [IN] DNSKEY flags
 * 3 algorithm base64…` (the key may be split by spaces).
 * @throws Error naming what is wrong.
 */
export function parsePublicKeyFile(text: string): PublicKeyFile {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith(';'));
  if (lines.length !== 1) throw new Error(`expected one DNSKEY record, found ${lines.length} record lines`);
  const fields = lines[0]!.trim().split(/\s+/);
  const owner = fields.shift()!;
  let ttl: number | undefined;
  if (/^\d+$/.test(fields[0] ?? '')) ttl = Number(fields.shift());
  if (fields[0]?.toUpperCase() === 'IN') fields.shift();
  if (fields.shift()?.toUpperCase() !== 'DNSKEY') throw new Error('the record is not a DNSKEY record');
  const [flags, protocol, algorithm, ...key] = fields;
  if (!/^\d+$/.test(flags ?? '') || !/^\d+$/.test(protocol ?? '') || !/^\d+$/.test(algorithm ?? '') || key.length === 0) {
    throw new Error('the DNSKEY record is not "flags protocol algorithm public-key"');
  }
  const publicKey = Buffer.from(key.join(''), 'base64');
  const dnskey: DnskeyData = { flags: Number(flags), protocol: Number(protocol), algorithm: Number(algorithm), publicKey };
  return { owner: canonicalName(owner), ttl, dnskey };
}

/**
 * Parses a `.private` file (`Field: value` lines).
 * @throws Error naming the missing or malformed field.
 */
export function parsePrivateKeyFile(text: string): PrivateKeyFile {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z0-9-]+):\s*(.*?)\s*$/.exec(line);
    if (m) fields.set(m[1]!, m[2]!);
  }
  const format = fields.get('Private-key-format');
  if (!format || !/^v1\.\d+$/.test(format)) throw new Error(`Private-key-format is ${format ?? 'missing'}, not v1.x`);
  const algorithm = /^(\d+)/.exec(fields.get('Algorithm') ?? '')?.[1];
  if (algorithm === undefined) throw new Error('Algorithm is missing');
  const key = fields.get('PrivateKey');
  if (!key) throw new Error('PrivateKey is missing (the file holds no private part)');
  const timing: Record<string, number> = {};
  for (const [field, name] of TIMING_FIELDS) {
    const value = fields.get(name);
    if (value === undefined) continue;
    const t = parseKeyTime(value);
    if (t === undefined) throw new Error(`${name} is "${value}", not YYYYMMDDHHMMSS`);
    timing[field] = t;
  }
  return { algorithm: Number(algorithm), privateKey: Buffer.from(key, 'base64'), timing };
}

/** Seconds since the epoch of a `YYYYMMDDHHMMSS` UTC time, or undefined when malformed. */
export function parseKeyTime(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/** `YYYYMMDDHHMMSS` UTC of seconds since the epoch. */
export function formatKeyTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * Joins the two files of a key, checking what a signer relies on: the algorithm is one gslbd
 * signs with and the same in both files, the owner is `zone` (when given), the DNSKEY is a zone
 * key with protocol 3, and the private key is the public key's.
 * @throws Error naming the first problem.
 */
export function keyFromFiles(pub: PublicKeyFile, priv: PrivateKeyFile, file: string, zone?: string): DnssecKey {
  const algorithm = ALGORITHMS.get(pub.dnskey.algorithm);
  if (!algorithm) throw new Error(unsupported(pub.dnskey.algorithm));
  if (priv.algorithm !== pub.dnskey.algorithm)
    throw new Error(`the .private file is for algorithm ${priv.algorithm}, the .key file for ${pub.dnskey.algorithm}`);
  if (zone !== undefined && pub.owner !== zone) throw new Error(`the key is for "${pub.owner || '.'}", not for the zone "${zone}"`);
  if (!(pub.dnskey.flags & ZONE_KEY_FLAG) || pub.dnskey.protocol !== 3) throw new Error('the DNSKEY is not a zone key (flags 256 or 257, protocol 3)');
  const privateKey = algorithm.importPrivate(priv.privateKey);
  if (!algorithm.publicKeyField(privateKey).equals(pub.dnskey.publicKey)) throw new Error('the private key does not belong to the public key');
  return {
    zone: pub.owner,
    algorithm,
    dnskey: pub.dnskey,
    keyTag: keyTag(pub.dnskey),
    ksk: (pub.dnskey.flags & SEP_FLAG) !== 0,
    privateKey,
    timing: priv.timing,
    ttl: pub.ttl,
    file,
  };
}

function unsupported(algorithm: number): string {
  return `algorithm ${algorithm} is not supported (13 ECDSAP256SHA256 and 15 ED25519 are)`;
}

/** A key pair read from disk, with what a check reports beside errors. */
export interface ReadKey {
  readonly key: DnssecKey;
  /** True when the `.private` file is readable by every user (mode o+r). */
  readonly worldReadable: boolean;
}

/**
 * Reads `<base>.key` and `<base>.private` ({@link keyBasePath} of `path`) and joins them.
 * @throws Error naming the file and the problem.
 */
export function readKeyPair(path: string, zone?: string): ReadKey {
  const base = keyBasePath(path);
  const read = (suffix: string): string => {
    try {
      return readFileSync(`${base}${suffix}`, 'utf8');
    } catch (e) {
      throw new Error(`cannot read ${base}${suffix}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  const parse = <T>(suffix: string, parser: (text: string) => T): T => {
    try {
      return parser(read(suffix));
    } catch (e) {
      const message = (e as Error).message;
      throw new Error(message.startsWith('cannot read') ? message : `${base}${suffix}: ${message}`);
    }
  };
  const pub = parse('.key', parsePublicKeyFile);
  // Other algorithms keep their private keys in other fields (RSA: Modulus, …): say which algorithm first.
  if (!ALGORITHMS.has(pub.dnskey.algorithm)) throw new Error(`${base}: ${unsupported(pub.dnskey.algorithm)}`);
  const priv = parse('.private', parsePrivateKeyFile);
  let key: DnssecKey;
  try {
    key = keyFromFiles(pub, priv, base, zone);
  } catch (e) {
    throw new Error(`${base}: ${(e as Error).message}`);
  }
  return { key, worldReadable: (statSync(`${base}.private`).mode & 0o004) !== 0 };
}

const privateTexts = new WeakMap<DnssecKey, string>();

/**
 * The private key of `key` as BIND's `.private` format v1.2 holds it — `Private-key-format`,
 * `Algorithm` (number and mnemonic) and `PrivateKey` (base64 of the raw scalar or seed) — without
 * timing metadata: the text PowerDNS takes as a key's content (its remote backend's
 * `getDomainKeys`). Made once per key.
 */
export function privateKeyText(key: DnssecKey): string {
  let text = privateTexts.get(key);
  if (text === undefined) {
    const raw = Buffer.from(key.privateKey.export({ format: 'jwk' }).d!, 'base64url');
    text = `Private-key-format: v1.2\nAlgorithm: ${key.algorithm.number} (${key.algorithm.mnemonic})\nPrivateKey: ${raw.toString('base64')}\n`;
    privateTexts.set(key, text);
  }
  return text;
}
