import { TYPE_CODES, type AnswerRecord, type RrsigData } from '../../core/dns/records.js';
import { rrsigFields } from '../../core/wire/dnssecRdata.js';
import { rdataBytes } from '../../core/wire/wireResponse.js';
import { canonicalNameWire } from './dnskey.js';
import type { DnssecKey } from './keyFiles.js';

/** When a signature is valid, in seconds since the epoch (RFC 4034 §3.1.5). */
export interface SignatureWindow {
  readonly inception: number;
  readonly expiration: number;
}

const CLASS_IN = 1;
const STAR = 0x2a;

/**
 * The data an RRSIG over `rrset` signs (RFC 4034 §3.1.8.1): the RRSIG RDATA without the
 * signature, then every RR in canonical form (§6.2: owner lower-cased and uncompressed, the
 * original TTL, RDATA with its names canonical) in canonical order (§6.3: by RDATA as unsigned
 * octets), duplicates once.
 * @param rrset records of one owner and type, as the answer holds them (owner in any case).
 */
export function signedData(rrset: readonly AnswerRecord[], fields: Omit<RrsigData, 'signature'>): Buffer {
  const first = rrset[0]!;
  const owner = canonicalNameWire(first.name);
  const type = TYPE_CODES[first.type];
  const rdatas = rrset.map((r) => rdataBytes(r.type, r.data)).sort((a, b) => Buffer.compare(a.subarray(2), b.subarray(2)));
  const parts: Buffer[] = [rrsigFields(fields)];
  let previous: Buffer | undefined;
  for (const rdata of rdatas) {
    if (previous !== undefined && previous.equals(rdata)) continue;
    previous = rdata;
    const head = Buffer.allocUnsafe(8);
    head.writeUInt16BE(type, 0);
    head.writeUInt16BE(CLASS_IN, 2);
    head.writeUInt32BE(fields.originalTtl >>> 0, 4);
    parts.push(owner, head, rdata);
  }
  return Buffer.concat(parts);
}

/**
 * The Labels field of an RRSIG at `owner` (RFC 4034 §3.1.3): its labels, without the root and
 * without a leading `*`. An online signer answers a wildcard's expansion under the query name
 * itself, as if that name existed (RFC 9824 §3, RFC 4592), so only a query for the literal
 * `*` name gets the shorter count.
 */
export function labelCount(owner: string): number {
  const wire = canonicalNameWire(owner);
  let labels = 0;
  for (let i = 0; wire[i] !== 0; i += wire[i]! + 1) labels++;
  return wire[0] === 1 && wire[1] === STAR ? labels - 1 : labels;
}

/**
 * The RRSIG of `rrset` made with `key` for the zone `signer` (canonical apex), valid in `window`.
 * The original TTL, and the RRSIG's own TTL, is the RRset's smallest TTL (RFC 4034 §3: they must
 * equal the RRset's, whose records share one TTL per RFC 2181 §5.2).
 */
export function rrsigOf(rrset: readonly AnswerRecord[], key: DnssecKey, signer: string, window: SignatureWindow): RrsigData {
  let ttl = rrset[0]!.ttl;
  for (const r of rrset) if (r.ttl < ttl) ttl = r.ttl;
  const fields = {
    typeCovered: TYPE_CODES[rrset[0]!.type],
    algorithm: key.algorithm.number,
    labels: labelCount(rrset[0]!.name),
    originalTtl: ttl,
    expiration: window.expiration,
    inception: window.inception,
    keyTag: key.keyTag,
    signerName: signer,
  };
  return { ...fields, signature: key.algorithm.sign(key.privateKey, signedData(rrset, fields)) };
}
