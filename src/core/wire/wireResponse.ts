import dnsPacket from 'dns-packet';
import { asciiLower } from '../dns/name.js';
import {
  DNSSEC_RECORD_TYPES,
  RECORD_TYPES,
  TYPE_CODES,
  type AnswerRecord,
  type AnswerRecordType,
  type DnssecRecordType,
  type RecordData,
  type RecordType,
} from '../dns/records.js';
import type { Answer } from '../model/query.js';
import { dnssecRdataBytes } from './dnssecRdata.js';
import { OWN_RDATA_TYPES, ownRdataBytes, type OwnRdataType } from './staticRdata.js';
import { ECS_OPTION_CODE, replyScope } from './ecsOption.js';
import type { WireEdns, WireQuestion } from './wireQuery.js';

/** The per-type RDATA codecs of dns-packet (`dnsPacket.record(type)`), which its typings omit. */
interface RdataCodec {
  encode(data: unknown, buf: Buffer, offset: number): Buffer;
  encodingLength(data: unknown): number;
}
const rdataCodec = (dnsPacket as unknown as { record: (type: string) => RdataCodec }).record;
const codecs = new Map<RecordType, RdataCodec>(RECORD_TYPES.map((t) => [t, rdataCodec(t)]));
const DNSSEC_TYPES: ReadonlySet<AnswerRecordType> = new Set(DNSSEC_RECORD_TYPES);

/** Everything a reply is made of besides the answer sections. */
export interface ReplyHeader {
  readonly id: number;
  /** Flags of the query: opcode, RD and CD are copied (RFC 1035 §4.1.1, RFC 6840 §5.9). */
  readonly queryFlags: number;
  readonly question?: WireQuestion;
  /** Present when the query had an OPT record: the reply then carries one (RFC 6891 §7). */
  readonly edns?: WireEdns;
  /** Our advertised EDNS UDP payload size (bytes). */
  readonly udpPayloadSize: number;
}

const SCRATCH = Buffer.allocUnsafe(65535);
const QR = 0x8000;
const AA = 0x0400;
const TC = 0x0200;
const COPIED_FLAGS = 0x7800 | 0x0100 | 0x0010; // opcode, RD, CD

/**
 * Encodes a reply. `limit` is the largest message the transport carries (UDP: the requestor's
 * payload size or 512; TCP: 65535). A reply over the limit is sent with TC set and empty
 * sections (RFC 2181 §9), so the client retries over TCP. Owner names that are the question name
 * or one of its suffixes are compressed to pointers into the question (RFC 1035 §4.1.4).
 */
export function encodeReply(h: ReplyHeader, answer: Answer | { rcode: number; authoritative: boolean }, limit: number): Buffer {
  const full = 'answers' in answer ? answer : undefined;
  let length = write(h, answer.rcode, answer.authoritative, full, false);
  if (length > limit) length = write(h, answer.rcode, answer.authoritative, undefined, true, full?.scope ?? 0);
  return Buffer.from(SCRATCH.subarray(0, length));
}

function write(h: ReplyHeader, rcode: number, aa: boolean, a: Answer | undefined, truncated: boolean, scope = a?.scope ?? 0): number {
  const buf = SCRATCH;
  buf.writeUInt16BE(h.id, 0);
  let flags = QR | (h.queryFlags & COPIED_FLAGS) | (rcode & 0xf);
  if (aa) flags |= AA;
  if (truncated) flags |= TC;
  buf.writeUInt16BE(flags, 2);
  let offset = 12;
  let qdcount = 0;
  const targets: CompressionTargets = { question: h.question, suffixes: undefined };
  if (h.question) {
    qdcount = 1;
    h.question.raw.copy(buf, offset);
    offset += h.question.raw.length;
  }
  if (a) {
    for (const rr of a.answers) offset = writeRecord(buf, offset, rr, targets);
    for (const rr of a.authority) offset = writeRecord(buf, offset, rr, targets);
    for (const rr of a.additional) offset = writeRecord(buf, offset, rr, targets);
  }
  let arcount = a ? a.additional.length : 0;
  if (h.edns) {
    offset = writeOpt(buf, offset, h, rcode, scope);
    arcount++;
  }
  buf.writeUInt16BE(qdcount, 4);
  buf.writeUInt16BE(a ? a.answers.length : 0, 6);
  buf.writeUInt16BE(a ? a.authority.length : 0, 8);
  buf.writeUInt16BE(arcount, 10);
  return offset;
}

/**
 * Whether `answer` written by {@link encodeReply} for `question` is the same for every letter case of
 * the question name but for the question itself (RFC 4343; DNS 0x20 resolvers randomise the case):
 * what the native fast path relies on when it keys a template case-insensitively and writes the
 * asked question over the template's (`native/fast_query.h`). Owner names equal to the question
 * name in any case are written as a pointer to it ({@link writeName}); every other name (owners,
 * and names in RDATA) is written as it is, so it must not carry the query's letters. Names from
 * configuration are canonical, lower case (`src/core/dns/name.ts`): true when every owner name is
 * the question name in some case or holds no A–Z. Not checked: RDATA, which the engine only fills
 * from configuration.
 */
export function caseNeutralOwners(answer: Answer, question: WireQuestion): boolean {
  const lower = asciiLower(question.name);
  for (const section of [answer.answers, answer.authority, answer.additional]) {
    for (let i = 0; i < section.length; i++) {
      const name = section[i]!.name;
      if (name !== question.name && asciiLower(name) !== name && asciiLower(name) !== lower) return false;
    }
  }
  return true;
}

/**
 * Names a reply can point to (RFC 1035 §4.1.4): the question name and its suffixes, by
 * lower-cased presentation form. The suffix map is built only when a name other than the
 * question name itself is written (most answers repeat the question name exactly).
 */
export interface CompressionTargets {
  readonly question: WireQuestion | undefined;
  suffixes: Map<string, number> | undefined;
}

function suffixesOf(t: CompressionTargets): ReadonlyMap<string, number> {
  if (t.suffixes) return t.suffixes;
  t.suffixes = new Map();
  if (t.question) {
    const labels = splitLabels(t.question.name);
    for (let i = 0; i < labels.length; i++) t.suffixes.set(asciiLower(labels.slice(i).join('.')), t.question.labelOffsets[i]!);
  }
  return t.suffixes;
}

/** Compression targets that compress nothing: every name written in full (the compact protocol's ANSWER frame). */
export const UNCOMPRESSED: CompressionTargets = { question: undefined, suffixes: new Map() };

/**
 * Writes one resource record in wire format (RFC 1035 §4.1.3) at `offset` and returns the offset
 * after it; owner names are compressed against `targets` ({@link UNCOMPRESSED} for none).
 * @throws RangeError when the record does not fit in `buf`.
 */
export function writeRecord(buf: Buffer, offset: number, rr: AnswerRecord, targets: CompressionTargets): number {
  offset = writeName(buf, offset, rr.name, targets);
  buf.writeUInt16BE(TYPE_CODES[rr.type], offset);
  buf.writeUInt16BE(1, offset + 2);
  buf.writeUInt32BE(rr.ttl, offset + 4);
  offset += 8;
  const rdata = rdataBytes(rr.type, rr.data);
  if (offset + rdata.length > buf.length) throw new RangeError(`record ${rr.name} ${rr.type} does not fit`);
  // Short RDATA (addresses, names) is copied byte by byte: cheaper than Buffer#copy's native call.
  if (rdata.length <= 64) for (let i = 0; i < rdata.length; i++) buf[offset + i] = rdata[i]!;
  else rdata.copy(buf, offset);
  return offset + rdata.length;
}

/** Entries per type in {@link rdataBytes}' cache of string data before it starts afresh. */
const MAX_CACHED_STRINGS = 4096;
const byObject = new WeakMap<object, Buffer>();
const byString = new Map<AnswerRecordType, Map<string, Buffer>>();
const RDATA_SCRATCH = Buffer.allocUnsafe(65536 + 2);

/**
 * RDLENGTH and RDATA of a record's data (dns-packet's encoders, `dnssecRdata.ts` for the DNSSEC
 * types, `staticRdata.ts` for TLSA, SSHFP, NAPTR, SVCB and HTTPS; names in RDATA are never compressed, so this is the canonical RDATA of RFC 4034 §6.2
 * for the engine's canonical data), encoded once per data value: record data is immutable
 * (snapshots share it, a selection hands out the endpoints' address strings, a signer its cached
 * signatures), so the bytes are cached by identity for structured data and by value, per type,
 * for strings (addresses and target names), bounded. The returned buffer is shared: never write to it.
 */
export function rdataBytes(type: AnswerRecordType, data: RecordData): Buffer {
  if (typeof data === 'string') {
    let cache = byString.get(type);
    if (!cache) {
      cache = new Map();
      byString.set(type, cache);
    }
    let bytes = cache.get(data);
    if (!bytes) {
      if (cache.size >= MAX_CACHED_STRINGS) cache.clear();
      bytes = encodeRdata(type, data);
      cache.set(data, bytes);
    }
    return bytes;
  }
  let bytes = byObject.get(data);
  if (!bytes) {
    bytes = encodeRdata(type, data);
    byObject.set(data, bytes);
  }
  return bytes;
}

function encodeRdata(type: AnswerRecordType, data: RecordData): Buffer {
  if (DNSSEC_TYPES.has(type)) return dnssecRdataBytes(type as DnssecRecordType, data as Parameters<typeof dnssecRdataBytes>[1]);
  if (OWN_RDATA_TYPES.has(type)) return ownRdataBytes(type as OwnRdataType, data as Parameters<typeof ownRdataBytes>[1]);
  codecs.get(type as RecordType)!.encode(rdataFor(type, data), RDATA_SCRATCH, 0);
  return Buffer.from(RDATA_SCRATCH.subarray(0, 2 + RDATA_SCRATCH.readUInt16BE(0)));
}

/** dns-packet's TXT encoder converts its input in place; give it fresh buffers. */
function rdataFor(type: AnswerRecordType, data: RecordData): unknown {
  return type === 'TXT' ? (data as string[]).map((s) => Buffer.from(s)) : data;
}

/**
 * Writes a presentation-form name in wire format at `offset` and returns the offset after it,
 * ending in a pointer when it or a suffix of it is the question name or a suffix of it
 * (RFC 1035 §4.1.4; {@link UNCOMPRESSED} writes it in full).
 */
export function writeName(buf: Buffer, offset: number, name: string, targets: CompressionTargets): number {
  if (targets.question && targets.question.labelOffsets.length > 0 && name === targets.question.name) {
    buf.writeUInt16BE(0xc000 | targets.question.labelOffsets[0]!, offset);
    return offset + 2;
  }
  if (!targets.question && !name.includes('\\')) return writePlainName(buf, offset, name);
  const suffixes = suffixesOf(targets);
  const labels = splitLabels(name);
  for (let i = 0; i < labels.length; i++) {
    const pointer = suffixes.get(asciiLower(i === 0 ? name : labels.slice(i).join('.')));
    if (pointer !== undefined) {
      buf.writeUInt16BE(0xc000 | pointer, offset);
      return offset + 2;
    }
    const bytes = labelBytes(labels[i]!);
    buf[offset++] = bytes.length;
    bytes.copy(buf, offset);
    offset += bytes.length;
  }
  buf[offset++] = 0;
  return offset;
}

/**
 * Writes a name without escapes, uncompressed, straight from its characters (latin1, as
 * {@link labelBytes}): the same bytes as the label-by-label path without splitting or allocating.
 */
function writePlainName(buf: Buffer, offset: number, name: string): number {
  const n = name === '.' ? 0 : name.length;
  let lengthAt = offset++;
  let length = 0;
  for (let i = 0; i < n; i++) {
    const c = name.charCodeAt(i);
    if (c === 46) {
      buf[lengthAt] = length;
      lengthAt = offset++;
      length = 0;
    } else {
      buf[offset++] = c;
      length++;
    }
  }
  if (n === 0) {
    buf[lengthAt] = 0;
    return offset;
  }
  buf[lengthAt] = length;
  buf[offset++] = 0;
  return offset;
}

function writeOpt(buf: Buffer, offset: number, h: ReplyHeader, rcode: number, scope: number): number {
  const edns = h.edns!;
  buf[offset] = 0;
  buf.writeUInt16BE(TYPE_CODES.OPT, offset + 1);
  buf.writeUInt16BE(h.udpPayloadSize, offset + 3);
  buf[offset + 5] = (rcode >> 4) & 0xff;
  buf[offset + 6] = 0;
  buf.writeUInt16BE(edns.dnssecOk ? dnsPacket.DNSSEC_OK : 0, offset + 7);
  offset += 9;
  if (edns.ecs) {
    // The ECS option echoes family, source prefix and address with our scope (RFC 7871 §7.2.1).
    const ecs = edns.ecs;
    const payloadLength = 4 + ecs.addressBytes.length;
    buf.writeUInt16BE(4 + payloadLength, offset);
    buf.writeUInt16BE(ECS_OPTION_CODE, offset + 2);
    buf.writeUInt16BE(payloadLength, offset + 4);
    buf.writeUInt16BE(ecs.family, offset + 6);
    buf[offset + 8] = ecs.sourcePrefix;
    buf[offset + 9] = replyScope(ecs, scope);
    ecs.addressBytes.copy(buf, offset + 10);
    return offset + 6 + payloadLength;
  }
  buf.writeUInt16BE(0, offset);
  return offset + 2;
}

/** Splits a presentation-form name on unescaped dots. */
function splitLabels(name: string): string[] {
  if (name === '' || name === '.') return [];
  if (!name.includes('\\')) return name.split('.');
  const labels: string[] = [];
  let cur = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '\\') {
      cur += name.slice(i, i + (/\d/.test(name[i + 1] ?? '') ? 4 : 2));
      i += /\d/.test(name[i + 1] ?? '') ? 3 : 1;
    } else if (c === '.') {
      labels.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  labels.push(cur);
  return labels;
}

/** Wire bytes of one presentation-form label (undoing `\.`, `\\` and `\DDD`). */
function labelBytes(label: string): Buffer {
  if (!label.includes('\\')) return Buffer.from(label, 'latin1');
  const out: number[] = [];
  for (let i = 0; i < label.length; i++) {
    if (label[i] === '\\' && /\d{3}/.test(label.slice(i + 1, i + 4))) {
      out.push(Number(label.slice(i + 1, i + 4)));
      i += 3;
    } else if (label[i] === '\\') {
      out.push(label.charCodeAt(++i));
    } else {
      out.push(label.charCodeAt(i));
    }
  }
  return Buffer.from(out);
}
