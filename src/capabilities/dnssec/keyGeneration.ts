import type { DnskeyData } from '../../core/dns/records.js';
import type { DnssecAlgorithm } from './algorithms.js';
import { keyTag, SEP_FLAG, ZONE_KEY_FLAG } from './dnskey.js';
import { formatKeyTime, TIMING_FIELDS, type KeyTiming } from './keyFiles.js';

/** What a new key is: its zone, algorithm, role, timing and DNSKEY TTL. */
export interface NewKeyRequest {
  /** The zone apex, canonical (`example.test`; `''` for the root). */
  readonly zone: string;
  readonly algorithm: DnssecAlgorithm;
  /** A key-signing key (flags 257) rather than a zone-signing key (256). */
  readonly ksk: boolean;
  readonly timing: KeyTiming;
  /** DNSKEY TTL written into the `.key` record (`dnssec-keygen -L`); none when absent. */
  readonly ttl?: number;
}

/** A generated key: its files' name and contents, and its DNSKEY. */
export interface GeneratedKey {
  /** `K<zone>.+<alg>+<tag>`, as dnssec-keygen names the pair (three-digit algorithm, five-digit tag). */
  readonly baseName: string;
  /** Contents of `<baseName>.key`. */
  readonly publicFile: string;
  /** Contents of `<baseName>.private` (write it with mode 0600). */
  readonly privateFile: string;
  readonly dnskey: DnskeyData;
  readonly keyTag: number;
}

/**
 * Generates a key pair and writes its two files the way `dnssec-keygen` of BIND 9.18 does (the
 * comment header, the DNSKEY line with the key in 56-character groups, Private-key-format v1.3
 * with the timing metadata), so BIND's tools and CoreDNS's `dnssec` plugin read them too.
 */
export function generateKey(req: NewKeyRequest): GeneratedKey {
  const raw = req.algorithm.generate();
  const publicKey = req.algorithm.publicKeyField(req.algorithm.importPrivate(raw));
  const dnskey: DnskeyData = { flags: ZONE_KEY_FLAG | (req.ksk ? SEP_FLAG : 0), protocol: 3, algorithm: req.algorithm.number, publicKey };
  const tag = keyTag(dnskey);
  const owner = `${req.zone}.`;
  const baseName = `K${owner}+${String(req.algorithm.number).padStart(3, '0')}+${String(tag).padStart(5, '0')}`;
  const set = TIMING_FIELDS.filter(([field]) => req.timing[field] !== undefined);
  const comments = set.map(([field, name]) => `; ${name}: ${formatKeyTime(req.timing[field]!)} (${ctime(req.timing[field]!)})`);
  const groups = publicKey
    .toString('base64')
    .match(/.{1,56}/g)!
    .join(' ');
  const publicFile = [
    `; This is a ${req.ksk ? 'key' : 'zone'}-signing key, keyid ${tag}, for ${owner}`,
    ...comments,
    `${owner} ${req.ttl === undefined ? '' : `${req.ttl} `}IN DNSKEY ${dnskey.flags} 3 ${req.algorithm.number} ${groups}`,
    '',
  ].join('\n');
  const privateFile = [
    'Private-key-format: v1.3',
    `Algorithm: ${req.algorithm.number} (${req.algorithm.mnemonic})`,
    `PrivateKey: ${raw.toString('base64')}`,
    ...set.map(([field, name]) => `${name}: ${formatKeyTime(req.timing[field]!)}`),
    '',
  ].join('\n');
  return { baseName, publicFile, privateFile, dnskey, keyTag: tag };
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Tue Dec  1 17:21:46 2026`: C's ctime() layout, in UTC, as BIND's comments show times. */
function ctime(seconds: number): string {
  const d = new Date(seconds * 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
}
