import { RCODE } from '../dns/rcode.js';
import { ECS_OPTION_CODE, parseEcs, type EcsOption } from './ecsOption.js';
import type { DelegationHop } from '../model/query.js';
import { DELEGATION_HOP_OPTION_CODE, parseDelegationHop } from './delegationHopOption.js';

/** The question of a query, kept as received so the reply echoes it byte for byte. */
export interface WireQuestion {
  /** Name in presentation form (no trailing dot; `\.`, `\\` and `\DDD` escapes), case as sent. */
  readonly name: string;
  readonly type: number;
  readonly class: number;
  /** The question's wire bytes (name, type, class). */
  readonly raw: Buffer;
  /** Wire offset (from the message start) of each label of the name, for compression pointers. */
  readonly labelOffsets: readonly number[];
}

/** EDNS(0) parameters of a query (RFC 6891 §6.1). */
export interface WireEdns {
  /** Requestor's UDP payload size; values below 512 count as 512 (§6.2.5). */
  readonly udpSize: number;
  readonly version: number;
  /** DNSSEC OK bit, copied to the reply (RFC 3225 §3). */
  readonly dnssecOk: boolean;
  readonly ecs?: EcsOption;
  /** The delegation hop option (`delegationHopOption.ts`) of a query another engine sent; never echoed. */
  readonly hop?: DelegationHop;
}

/** A query the engine can answer. */
export interface WireQuery {
  readonly id: number;
  /** Header flags word as received (RD, CD and opcode are copied into the reply). */
  readonly flags: number;
  readonly question: WireQuestion;
  readonly edns?: WireEdns;
}

/** What to do with a message: drop it, answer with an error code, or answer the query. */
export type DecodedMessage =
  | { readonly kind: 'drop'; readonly reason: string }
  | {
      readonly kind: 'error';
      readonly rcode: number;
      readonly reason: string;
      readonly id: number;
      readonly flags: number;
      readonly question?: WireQuestion;
      readonly edns?: WireEdns;
      /** True for BADVERS: the extended rcode goes into the OPT record. */
      readonly badVersion?: boolean;
    }
  | { readonly kind: 'query'; readonly query: WireQuery };

const QR = 0x8000;
const CLASS_IN = 1;
const TYPE_OPT = 41;
/** The DO bit in the OPT record's TTL flags (RFC 3225 §3). */
const DNSSEC_OK = 0x8000;

/**
 * Decodes and validates a query message (RFC 1035 §4.1, RFC 6891). Never throws: anything
 * malformed becomes an error answer (FORMERR, NOTIMP, REFUSED, BADVERS) or, when no reply can
 * be formed (shorter than a header) or must not be sent (QR=1, RFC 1035 §4.1.1), a drop.
 */
export function decodeQuery(buf: Buffer): DecodedMessage {
  if (buf.length < 12) return { kind: 'drop', reason: 'shorter than a DNS header' };
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  if (flags & QR) return { kind: 'drop', reason: 'QR bit set (a response, not a query)' };
  const qdcount = buf.readUInt16BE(4);
  const opcode = (flags >> 11) & 0xf;
  const error = (rcode: number, reason: string, question?: WireQuestion, edns?: WireEdns): DecodedMessage => ({
    kind: 'error',
    rcode,
    reason,
    id,
    flags,
    question,
    edns,
  });
  if (qdcount !== 1) return error(opcode === 0 ? RCODE.FORMERR : RCODE.NOTIMP, `QDCOUNT is ${qdcount}, not 1`);
  const question = readQuestion(buf);
  if (typeof question === 'string') return error(RCODE.FORMERR, question);
  const counts = [buf.readUInt16BE(6), buf.readUInt16BE(8), buf.readUInt16BE(10)] as const;
  // A reply to a query with a well-formed OPT record carries OPT, error replies included
  // (RFC 6891 §7), so EDNS is read before the opcode and option checks.
  const parsed = counts[0] + counts[1] + counts[2] > 0 ? readEdns(buf, 12 + question.raw.length, counts) : undefined;
  const edns = parsed?.edns;
  if (opcode !== 0) return error(RCODE.NOTIMP, `opcode ${opcode} is not QUERY`, question, edns);
  if (parsed?.problem !== undefined) return error(RCODE.FORMERR, parsed.problem, question, edns);
  if (edns && edns.version > 0) {
    return { kind: 'error', rcode: 16, reason: `EDNS version ${edns.version}`, id, flags, question, edns, badVersion: true };
  }
  if (question.class !== CLASS_IN) return error(RCODE.REFUSED, `class ${question.class} is not IN`, question, edns);
  return { kind: 'query', query: { id, flags, question, edns } };
}

/** Reads the single question at offset 12; no compression is allowed there. Returns a reason on error. */
function readQuestion(buf: Buffer): WireQuestion | string {
  let offset = 12;
  let wireLength = 0;
  const labels: string[] = [];
  const labelOffsets: number[] = [];
  for (;;) {
    if (offset >= buf.length) return 'question name runs past the message';
    const len = buf[offset]!;
    if (len === 0) {
      offset++;
      break;
    }
    if (len & 0xc0) return 'compression or extended label in the question name';
    if (offset + 1 + len > buf.length) return 'question name runs past the message';
    wireLength += len + 1;
    if (wireLength + 1 > 255) return 'question name longer than 255 octets';
    labelOffsets.push(offset);
    labels.push(presentLabel(buf, offset + 1, len));
    offset += 1 + len;
  }
  if (offset + 4 > buf.length) return 'question type and class missing';
  return {
    name: labels.join('.'),
    type: buf.readUInt16BE(offset),
    class: buf.readUInt16BE(offset + 2),
    raw: buf.subarray(12, offset + 4),
    labelOffsets,
  };
}

/** Presentation form of a label: printable ASCII as is, `.` and `\` escaped, other octets as `\DDD`. */
export function presentLabel(buf: Buffer, start: number, len: number): string {
  for (let i = start; i < start + len; i++) {
    const c = buf[i]!;
    if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) return escapedLabel(buf, start, len);
  }
  // The common case: nothing to escape, one string straight from the bytes.
  return buf.toString('latin1', start, start + len);
}

function escapedLabel(buf: Buffer, start: number, len: number): string {
  let out = '';
  for (let i = start; i < start + len; i++) {
    const c = buf[i]!;
    if (c === 0x2e || c === 0x5c) out += `\\${String.fromCharCode(c)}`;
    else if (c > 0x20 && c < 0x7f) out += String.fromCharCode(c);
    else out += `\\${String(c).padStart(3, '0')}`;
  }
  return out;
}

/**
 * What the records after the question say about EDNS: the OPT record's parameters (absent
 * without one) and a problem (FORMERR) when there is one. A problem inside a well-formed OPT
 * record (a bad option) comes with that OPT's parameters, without ECS, so the error reply still
 * carries OPT (RFC 6891 §7).
 */
interface EdnsReading {
  readonly edns?: WireEdns;
  readonly problem?: string;
}

/**
 * Walks the answer, authority and additional sections after the question (RFC 1035 §4.1.3) and
 * reads the OPT record (RFC 6891 §6.1.2). Problems: a record runs past the message or has a bad
 * owner name, or the OPT record sits outside the additional section, repeats, has a non-root
 * owner or malformed options. Records other than OPT are skipped unread (names are checked for
 * form, compression pointers are not followed).
 */
function readEdns(buf: Buffer, offset: number, counts: readonly [number, number, number]): EdnsReading {
  let edns: WireEdns | undefined;
  for (let section = 0; section < 3; section++) {
    for (let i = 0; i < counts[section]!; i++) {
      const owner = offset;
      offset = skipName(buf, offset);
      if (offset < 0) return { problem: 'undecodable records: malformed owner name' };
      if (offset + 10 > buf.length) return { problem: 'undecodable records: record runs past the message' };
      const rdata = offset + 10;
      const rdlength = buf.readUInt16BE(offset + 8);
      if (rdata + rdlength > buf.length) return { problem: 'undecodable records: record data runs past the message' };
      if (buf.readUInt16BE(offset) === TYPE_OPT) {
        if (section !== 2) return { problem: 'OPT record outside the additional section' };
        if (edns) return { problem: 'more than one OPT record' };
        if (buf[owner] !== 0) return { problem: 'OPT record owner is not the root' };
        const opt = readOpt(buf, offset, rdata, rdlength);
        if (opt.problem !== undefined) return opt;
        edns = opt.edns;
      }
      offset = rdata + rdlength;
    }
  }
  return { edns };
}

/**
 * The end offset of the name at `offset`, or -1 when it runs past the message, uses a reserved
 * label type, is longer than 255 octets, or holds a compression pointer that does not point back.
 */
function skipName(buf: Buffer, offset: number): number {
  const start = offset;
  for (;;) {
    if (offset >= buf.length) return -1;
    const len = buf[offset]!;
    if (len === 0) return offset + 1;
    if ((len & 0xc0) === 0xc0) {
      if (offset + 2 > buf.length) return -1;
      return (buf.readUInt16BE(offset) & 0x3fff) < start ? offset + 2 : -1;
    }
    if (len & 0xc0) return -1;
    offset += 1 + len;
    if (offset - start > 255) return -1;
  }
}

/**
 * Reads an OPT record whose fixed fields start at `fixed` (TYPE, CLASS = requestor's UDP payload
 * size, TTL = extended RCODE, VERSION, DO and Z; RFC 6891 §6.1.2–6.1.3) and its options. The
 * fixed fields are always returned; a malformed option adds a problem.
 */
function readOpt(buf: Buffer, fixed: number, rdata: number, rdlength: number): { edns: WireEdns; problem?: string } {
  const base: WireEdns = {
    udpSize: Math.max(512, buf.readUInt16BE(fixed + 2)),
    version: buf[fixed + 5]!,
    dnssecOk: (buf.readUInt16BE(fixed + 6) & DNSSEC_OK) !== 0,
  };
  let ecs: EcsOption | undefined;
  let hop: DelegationHop | undefined;
  const end = rdata + rdlength;
  for (let o = rdata; o < end;) {
    if (o + 4 > end) return { edns: base, problem: 'undecodable records: EDNS option runs past the OPT record' };
    const code = buf.readUInt16BE(o);
    const data = o + 4;
    const next = data + buf.readUInt16BE(o + 2);
    if (next > end) return { edns: base, problem: 'undecodable records: EDNS option runs past the OPT record' };
    if (code === ECS_OPTION_CODE) {
      if (ecs) return { edns: base, problem: 'more than one ECS option' };
      const parsed = parseEcs(buf.subarray(data, next));
      if (typeof parsed === 'string') return { edns: base, problem: parsed };
      ecs = parsed;
    } else if (code === DELEGATION_HOP_OPTION_CODE) {
      hop = parseDelegationHop(buf.subarray(data, next));
    }
    o = next;
  }
  if (hop !== undefined) return { edns: ecs ? { ...base, ecs, hop } : { ...base, hop } };
  return { edns: ecs ? { ...base, ecs } : base };
}
