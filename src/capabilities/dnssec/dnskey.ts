import { createHash } from 'node:crypto';
import type { DnskeyData, DsData } from '../../core/dns/records.js';
import { dnssecRdata, nameWire } from '../../core/wire/dnssecRdata.js';

/** DNSKEY flags: Zone Key (bit 7, RFC 4034 §2.1.1). */
export const ZONE_KEY_FLAG = 0x0100;
/** DNSKEY flags: Secure Entry Point (bit 15): a key-signing key (RFC 4034 §2.1.1, RFC 3757). */
export const SEP_FLAG = 0x0001;
/** DS digest type 2, SHA-256 (RFC 4509): the one digest gslbd prints and publishes. */
export const DIGEST_SHA256 = 2;

/** The key tag of a DNSKEY (RFC 4034 Appendix B), over its RDATA. */
export function keyTag(key: DnskeyData): number {
  const rdata = dnssecRdata('DNSKEY', key);
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i]! : rdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/**
 * The canonical wire form of a name (RFC 4034 §6.2): uncompressed, every ASCII letter lower-cased,
 * escapes (`\.`, `\DDD`) resolved first, so `\065` and `A` are both `a`.
 * @throws RangeError when a label is longer than 63 octets.
 */
export function canonicalNameWire(name: string): Buffer {
  const wire = nameWire(name);
  for (let i = 0; i < wire.length && wire[i] !== 0; i += wire[i]! + 1) {
    for (let j = i + 1; j <= i + wire[i]!; j++) if (wire[j]! >= 0x41 && wire[j]! <= 0x5a) wire[j]! += 0x20;
  }
  return wire;
}

/** The SHA-256 DS of `key` at the apex `zone` (RFC 4034 §5.1.4, RFC 4509 §2.1): what the parent publishes. */
export function dsOf(zone: string, key: DnskeyData): DsData {
  const digest = createHash('sha256').update(canonicalNameWire(zone)).update(dnssecRdata('DNSKEY', key)).digest();
  return { keyTag: keyTag(key), algorithm: key.algorithm, digestType: DIGEST_SHA256, digest };
}
