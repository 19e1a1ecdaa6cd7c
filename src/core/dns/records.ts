/**
 * The record model every front door shares. Data shapes follow `dns-packet` so the standalone
 * listener encodes them directly; the PowerDNS front door prints them in presentation form and
 * the compact protocol carries them in wire format.
 */

/** Record types the engine serves. */
export const RECORD_TYPES = [
  'A',
  'AAAA',
  'CNAME',
  'NS',
  'MX',
  'TXT',
  'SRV',
  'PTR',
  'CAA',
  'SOA',
  'HINFO',
  'DS',
  'TLSA',
  'SSHFP',
  'NAPTR',
  'SVCB',
  'HTTPS',
] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Types a GSLB record may have: address records and the target-bearing types. */
export const GSLB_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'SRV'] as const;
export type GslbRecordType = (typeof GSLB_RECORD_TYPES)[number];

/**
 * DNSSEC record types (RFC 4034, RFC 7344): added to answers by an online signer
 * (`src/capabilities/dnssec/`) after the engine built them; of these only DS may also be
 * configured, as a static record at a delegation (it is in {@link RECORD_TYPES} too).
 */
export const DNSSEC_RECORD_TYPES = ['DS', 'RRSIG', 'NSEC', 'DNSKEY', 'CDS', 'CDNSKEY'] as const;
export type DnssecRecordType = (typeof DNSSEC_RECORD_TYPES)[number];

/** Every type a record of an answer may have: the engine's and the signer's. */
export type AnswerRecordType = RecordType | DnssecRecordType;

/**
 * Numeric codes of the types (RFC 1035 §3.2.2, RFC 3596, RFC 2782, RFC 8659, RFC 4034 §2–§5,
 * RFC 7344 §3, RFC 6698 §7.1 TLSA, RFC 4255 §5 SSHFP, RFC 3403 §4 NAPTR, RFC 9460 §14.1 SVCB, HTTPS).
 */
export const TYPE_CODES: Readonly<Record<AnswerRecordType | 'ANY' | 'OPT', number>> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  NAPTR: 35,
  OPT: 41,
  DS: 43,
  SSHFP: 44,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  CDS: 59,
  CDNSKEY: 60,
  SVCB: 64,
  HTTPS: 65,
  TLSA: 52,
  CAA: 257,
  ANY: 255,
};

const TYPE_NAMES = new Map<number, string>(Object.entries(TYPE_CODES).map(([name, code]) => [code, name]));

/** A type's name (`AAAA`), or `TYPEnnn` for a type without one here (RFC 3597 §5). */
export function typeName(code: number): string {
  return TYPE_NAMES.get(code) ?? `TYPE${code}`;
}

export interface MxData {
  preference: number;
  exchange: string;
}
export interface SrvData {
  priority: number;
  weight: number;
  port: number;
  target: string;
}
/** SOA fields; times in seconds (RFC 1035 §3.3.13). */
export interface SoaData {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}
/** HINFO, used only for the minimal answer to ANY (RFC 8482 §4.2). */
export interface HinfoData {
  cpu: string;
  os: string;
}
export interface CaaData {
  flags: number;
  tag: string;
  value: string;
}

/** DNSKEY and CDNSKEY data (RFC 4034 §2.1, RFC 7344 §3.2). */
export interface DnskeyData {
  /** 256 zone key; 257 zone key with the SEP bit (a key-signing key). */
  readonly flags: number;
  /** Always 3 (RFC 4034 §2.1.2). */
  readonly protocol: number;
  /** DNSSEC algorithm number (13 ECDSA P-256 SHA-256, 15 Ed25519). */
  readonly algorithm: number;
  /** The public key field in the algorithm's format (RFC 6605 §4: x‖y; RFC 8080 §3: the 32-byte key). */
  readonly publicKey: Buffer;
}
/** DS and CDS data (RFC 4034 §5.1, RFC 7344 §3.1). */
export interface DsData {
  readonly keyTag: number;
  readonly algorithm: number;
  /** 2 = SHA-256 (RFC 4509). */
  readonly digestType: number;
  readonly digest: Buffer;
}
/** TLSA data (RFC 6698 §2.1): certificate usage, selector, matching type, the association data. */
export interface TlsaData {
  readonly usage: number;
  readonly selector: number;
  readonly matchingType: number;
  readonly certificate: Buffer;
}
/** SSHFP data (RFC 4255 §3.1): key algorithm, fingerprint type (1 SHA-1, 2 SHA-256, RFC 6594), the fingerprint. */
export interface SshfpData {
  readonly algorithm: number;
  readonly hash: number;
  readonly fingerprint: Buffer;
}
/** NAPTR data (RFC 3403 §4.1): the three character strings as their octets, `replacement` a canonical name (`''` for the root). */
export interface NaptrData {
  readonly order: number;
  readonly preference: number;
  readonly flags: string;
  readonly services: string;
  readonly regexp: string;
  readonly replacement: string;
}
/** One SvcParam of SVCB/HTTPS (RFC 9460 §2.2): its key number and its value in wire format. */
export interface SvcParam {
  readonly key: number;
  readonly value: Buffer;
}
/** SVCB and HTTPS data (RFC 9460 §2.2): priority 0 is alias form; `target` canonical, `''` for `.`; params in ascending key order. */
export interface SvcbData {
  readonly priority: number;
  readonly target: string;
  readonly params: readonly SvcParam[];
}
/** RRSIG data (RFC 4034 §3.1); times in seconds since the epoch, serial-number arithmetic on the wire. */
export interface RrsigData {
  /** Numeric type of the RRset it covers. */
  readonly typeCovered: number;
  readonly algorithm: number;
  /** Labels of the owner name, without a leading `*` label (RFC 4034 §3.1.3). */
  readonly labels: number;
  readonly originalTtl: number;
  readonly expiration: number;
  readonly inception: number;
  readonly keyTag: number;
  /** The zone apex, canonical. */
  readonly signerName: string;
  readonly signature: Buffer;
}
/** NSEC data (RFC 4034 §4.1). */
export interface NsecData {
  /** Next owner name in canonical order, in presentation form (`\\000.name` for a compact answer, RFC 9824 §3). */
  readonly nextName: string;
  /** Numeric types present at the owner, ascending (NXNAME = 128 for a nonexistent name, RFC 9824 §2). */
  readonly types: readonly number[];
}

/**
 * Record data by type: an address string (A, AAAA), a canonical target name (CNAME, NS, PTR),
 * character strings (TXT), or the structures above.
 */
export type RecordData =
  | string
  | string[]
  | MxData
  | SrvData
  | SoaData
  | CaaData
  | HinfoData
  | DnskeyData
  | DsData
  | RrsigData
  | NsecData
  | TlsaData
  | SshfpData
  | NaptrData
  | SvcbData;

/**
 * One resource record; `ttl` in seconds, `name` canonical (the front door restores query case).
 * Names inside the data are canonical (lower case) too, so a record's RDATA in wire format is
 * its canonical form for DNSSEC (RFC 4034 §6.2). `T` is the engine's types unless said otherwise:
 * answers also hold the signer's ({@link AnswerRecord}).
 */
export interface ResourceRecord<T extends AnswerRecordType = RecordType> {
  readonly name: string;
  readonly type: T;
  readonly ttl: number;
  readonly data: RecordData;
}

/** A record of an answer: the engine's types or the DNSSEC types a signer adds. */
export type AnswerRecord = ResourceRecord<AnswerRecordType>;
