/**
 * The record model every front door shares. Data shapes follow `dns-packet` so the standalone
 * listener encodes them directly; the PowerDNS front door prints them in presentation form and
 * the compact protocol carries them in wire format.
 */

/** Record types the engine serves. */
export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'NS', 'MX', 'TXT', 'SRV', 'PTR', 'CAA', 'SOA', 'HINFO'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/** Types a GSLB record may have: address records and the target-bearing types. */
export const GSLB_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'SRV'] as const;
export type GslbRecordType = (typeof GSLB_RECORD_TYPES)[number];

/** Numeric codes of the types (RFC 1035 §3.2.2, RFC 3596, RFC 2782, RFC 8659). */
export const TYPE_CODES: Readonly<Record<RecordType | 'ANY' | 'OPT', number>> = {
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
  OPT: 41,
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

/**
 * Record data by type: an address string (A, AAAA), a canonical target name (CNAME, NS, PTR),
 * character strings (TXT), or the structures above.
 */
export type RecordData = string | string[] | MxData | SrvData | SoaData | CaaData | HinfoData;

/** One resource record; `ttl` in seconds, `name` canonical (the front door restores query case). */
export interface ResourceRecord {
  readonly name: string;
  readonly type: RecordType;
  readonly ttl: number;
  readonly data: RecordData;
}
