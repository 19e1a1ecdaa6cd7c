import { addressFromBytes, type IpAddress } from '../../core/net/ipAddress.js';
import type { AnswerRecord } from '../../core/dns/records.js';
import { presentLabel } from '../../core/wire/wireQuery.js';
import { UNCOMPRESSED, writeName, writeRecord } from '../../core/wire/wireResponse.js';
import { encodingSlot } from '../../core/model/encodingSlot.js';

/**
 * The engine's half of the compact protocol, version 1 (docs/protocol.md): the frame header, the
 * decoders of what a shim sends (HELLO, QUERY) and the encoders of what the engine sends
 * (HELLO_ACK, ANSWER, ERROR, PONG). Byte layouts are pinned by test/fixtures/compact/vectors.json,
 * which the Go codec in coredns-bridge/internal/frame reads too.
 */

/** Protocol version this engine speaks. */
export const PROTOCOL_VERSION = 1;
/** Bytes of the frame header: length u32, version u8, kind u8, flags u16, id u32. */
export const HEADER_BYTES = 12;
/** Smallest `length` field: the header after the length itself. */
export const MIN_FRAME_LENGTH = 8;
/** Largest `length` field any peer may send (128 KiB). */
export const MAX_FRAME_LENGTH = 131072;

export const FrameKind = { QUERY: 1, ANSWER: 2, ERROR: 3, PING: 4, PONG: 5, HELLO: 6, HELLO_ACK: 7 } as const;
export const ErrorCode = { OVERLOADED: 1, INTERNAL: 2, BAD_REQUEST: 3, UNSUPPORTED_VERSION: 4, UNKNOWN_KIND: 5 } as const;
/** QUERY flag: the body carries the query's ECS option data. */
export const QUERY_FLAG_ECS = 0x0001;
/** ANSWER flag: set AA in the reply. */
export const ANSWER_FLAG_AA = 0x0001;
/** ANSWER flag: the name is outside every zone of the engine (rcode REFUSED). */
export const ANSWER_FLAG_NOT_OURS = 0x0002;
/** Engine state in HELLO_ACK and PONG. */
export const EngineState = { SERVING: 1, STOPPING: 2 } as const;

/** The fixed header of a frame. */
export interface FrameHeader {
  /** Bytes after the length field (8 + body). */
  readonly length: number;
  readonly version: number;
  readonly kind: number;
  readonly flags: number;
  readonly id: number;
}

/** A shim's HELLO. */
export interface Hello {
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly maxInflight: number;
  readonly name: string;
}

/** A decoded QUERY body. */
export interface CompactQuery {
  readonly qtype: number;
  readonly qclass: number;
  /** 0 udp, 1 tcp, 2 tls, 3 https, 4 quic, 5 grpc, 6 https3, 255 other. */
  readonly transport: number;
  /** The resolver's address (IPv4-mapped folded to IPv4); undefined for family 0. */
  readonly source: IpAddress | undefined;
  readonly sourcePort: number;
  /** The query's ECS option data as received (RFC 7871 §6), when flag ECS was set. */
  readonly ecs: Buffer | undefined;
  /** Question name in presentation form (escapes as in wireQuery.ts), case as received, no trailing dot. */
  readonly qname: string;
}

/** What an ANSWER frame carries. */
export interface AnswerFrame {
  readonly rcode: number;
  readonly authoritative: boolean;
  readonly notOurs: boolean;
  /** SCOPE PREFIX-LENGTH for the reply's ECS option, in bits of the query's ECS family. */
  readonly ecsScope: number;
  /** Scope of the answer in bits of the client address's (folded) family. */
  readonly clientScope: number;
  readonly answers: readonly AnswerRecord[];
  readonly authority: readonly AnswerRecord[];
  readonly additional: readonly AnswerRecord[];
}

/** Reads the header at the start of a whole frame (the caller has checked `frame.length ≥ 12`). */
export function readHeader(frame: Buffer): FrameHeader {
  return {
    length: frame.readUInt32BE(0),
    version: frame[4]!,
    kind: frame[5]!,
    flags: frame.readUInt16BE(6),
    id: frame.readUInt32BE(8),
  };
}

/** Decodes a HELLO body; returns the reason when it is malformed. */
export function decodeHello(frame: Buffer): Hello | string {
  const body = frame.subarray(HEADER_BYTES);
  if (body.length < 9) return 'HELLO body shorter than 9 bytes';
  const n = body[8]!;
  if (body.length < 9 + n) return 'HELLO name runs past the frame';
  return {
    minVersion: body[0]!,
    maxVersion: body[1]!,
    maxInflight: body.readUInt32BE(4),
    name: body.toString('utf8', 9, 9 + n),
  };
}

/** Decodes a QUERY body (docs/protocol.md, QUERY); returns the reason when it is malformed. */
export function decodeQuery(frame: Buffer, flags: number): CompactQuery | string {
  const end = frame.length;
  if (end < HEADER_BYTES + 8) return 'QUERY body shorter than 8 bytes';
  const family = frame[HEADER_BYTES + 5]!;
  const addressBytes = family === 1 ? 4 : family === 2 ? 16 : family === 0 ? 0 : -1;
  if (addressBytes < 0) return `source family ${family} is not 0, 1 or 2`;
  let offset = HEADER_BYTES + 8;
  if (offset + addressBytes > end) return 'source address runs past the frame';
  const source = family === 0 ? undefined : addressFromBytes(family === 1 ? 4 : 6, frame, offset, offset + addressBytes);
  offset += addressBytes;
  let ecs: Buffer | undefined;
  if (flags & QUERY_FLAG_ECS) {
    if (offset >= end) return 'ECS length missing';
    const n = frame[offset]!;
    if (offset + 1 + n > end) return 'ECS option runs past the frame';
    ecs = frame.subarray(offset + 1, offset + 1 + n);
    offset += 1 + n;
  }
  const qname = readName(frame, offset);
  if (typeof qname !== 'string') return qname.error;
  return {
    qtype: frame.readUInt16BE(HEADER_BYTES),
    qclass: frame.readUInt16BE(HEADER_BYTES + 2),
    transport: frame[HEADER_BYTES + 4]!,
    source,
    sourcePort: frame.readUInt16BE(HEADER_BYTES + 6),
    ecs,
    qname,
  };
}

/** Presentation bytes of a name without escapes (at most 254), for {@link readName}. */
const NAME_SCRATCH = Buffer.allocUnsafe(256);

/**
 * Reads an uncompressed wire-format name into presentation form, or says why it cannot. A name
 * whose bytes need no escapes (nearly all) becomes one string from one scratch copy; others are
 * built label by label with the escapes of wireQuery.ts.
 */
function readName(buf: Buffer, offset: number): string | { error: string } {
  const start = offset;
  let plain = true;
  let out = 0;
  for (;;) {
    if (offset >= buf.length) return { error: 'question name runs past the frame' };
    const len = buf[offset]!;
    if (len === 0) break;
    if (len > 63) return { error: 'compressed or extended label in the question name' };
    if (offset + 1 + len > buf.length) return { error: 'question name runs past the frame' };
    if (offset - start + len + 2 > 255) return { error: 'question name longer than 255 octets' };
    if (out > 0) NAME_SCRATCH[out++] = 0x2e;
    for (let i = offset + 1; i <= offset + len; i++) {
      const c = buf[i]!;
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) plain = false;
      NAME_SCRATCH[out++] = c;
    }
    offset += 1 + len;
  }
  if (plain) return NAME_SCRATCH.toString('latin1', 0, out);
  let name = '';
  for (let at = start; buf[at]! !== 0; at += 1 + buf[at]!) name += (at === start ? '' : '.') + presentLabel(buf, at + 1, buf[at]!);
  return name;
}

/** Bytes {@link writeAnswer} may use past its start: the largest frame plus one record of slack. */
export const ANSWER_ROOM = MAX_FRAME_LENGTH + 4 + 65536;
/** Scratch space for {@link encodeAnswer}. */
const SCRATCH = Buffer.allocUnsafe(ANSWER_ROOM);

/**
 * Encodes an ANSWER frame into a new buffer; see {@link writeAnswer}.
 */
export function encodeAnswer(id: number, a: AnswerFrame): Buffer {
  return Buffer.from(SCRATCH.subarray(0, writeAnswer(SCRATCH, 0, id, a)));
}

/**
 * Writes an ANSWER frame at `start` of `buf` (which must have {@link ANSWER_ROOM} bytes from
 * there) and returns the offset after it. Records are written uncompressed (RFC 1035 §4.1.3) by
 * the standalone listener's record writer. An answer whose frame would exceed
 * {@link MAX_FRAME_LENGTH} becomes SERVFAIL with no records (docs/protocol.md, ANSWER).
 */
export function writeAnswer(buf: Buffer, start: number, id: number, a: AnswerFrame): number {
  let flags = 0;
  if (a.authoritative) flags |= ANSWER_FLAG_AA;
  if (a.notOurs) flags |= ANSWER_FLAG_NOT_OURS;
  const limit = start + 4 + MAX_FRAME_LENGTH;
  let offset = start + HEADER_BYTES + 10;
  try {
    for (const rr of a.answers) if ((offset = writeFrameRecord(buf, offset, rr)) > limit) break;
    if (offset <= limit) for (const rr of a.authority) if ((offset = writeFrameRecord(buf, offset, rr)) > limit) break;
    if (offset <= limit) for (const rr of a.additional) if ((offset = writeFrameRecord(buf, offset, rr)) > limit) break;
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    offset = limit + 1;
  }
  if (offset > limit) {
    return writeAnswer(buf, start, id, { ...a, rcode: 2, authoritative: false, answers: [], authority: [], additional: [] });
  }
  writeHeader(buf, start, offset - start, FrameKind.ANSWER, flags, id);
  const body = start + HEADER_BYTES;
  buf.writeUInt16BE(a.rcode, body);
  buf[body + 2] = a.ecsScope;
  buf[body + 3] = a.clientScope;
  buf.writeUInt16BE(a.answers.length, body + 4);
  buf.writeUInt16BE(a.authority.length, body + 6);
  buf.writeUInt16BE(a.additional.length, body + 8);
  return offset;
}

/**
 * Wire bytes after the owner name (TYPE, CLASS, TTL, RDLENGTH, RDATA) of frozen records. The
 * decision cache answers every query a decision serves with the same frozen records
 * (`zones/authoritative.ts`, `Answer.answers`), so those bytes are encoded once per record, in the
 * record's encoding slot (`core/model/encodingSlot.ts`: not a WeakMap entry per record); the
 * owner name is still written per query. Unfrozen records (built per query) are never kept.
 */
const FROZEN_TAIL = Symbol('compact frame tail');

/** Writes one record uncompressed, reusing a frozen record's encoded tail; see {@link FROZEN_TAIL}. */
function writeFrameRecord(buf: Buffer, offset: number, rr: AnswerRecord): number {
  const slot = Object.isFrozen(rr) ? encodingSlot(rr) : undefined;
  if (slot === undefined) return writeRecord(buf, offset, rr, UNCOMPRESSED);
  const tail = slot[FROZEN_TAIL] as Buffer | undefined;
  if (tail === undefined) {
    const end = writeRecord(buf, offset, rr, UNCOMPRESSED);
    slot[FROZEN_TAIL] = Buffer.from(buf.subarray(writeName(buf, offset, rr.name, UNCOMPRESSED), end));
    return end;
  }
  offset = writeName(buf, offset, rr.name, UNCOMPRESSED);
  if (offset + tail.length > buf.length) throw new RangeError(`record ${rr.name} ${rr.type} does not fit`);
  // Short tails (addresses, names) are copied byte by byte: cheaper than Buffer#copy's native call.
  if (tail.length <= 64) for (let i = 0; i < tail.length; i++) buf[offset + i] = tail[i]!;
  else tail.copy(buf, offset);
  return offset + tail.length;
}

/** Encodes an ERROR frame; the message is cut to 1024 bytes. */
export function encodeError(id: number, code: number, message: string): Buffer {
  const text = Buffer.from(message, 'utf8').subarray(0, 1024);
  const out = Buffer.allocUnsafe(HEADER_BYTES + 4 + text.length);
  writeHeader(out, 0, out.length, FrameKind.ERROR, 0, id);
  out.writeUInt16BE(code, HEADER_BYTES);
  out.writeUInt16BE(text.length, HEADER_BYTES + 2);
  text.copy(out, HEADER_BYTES + 4);
  return out;
}

/** Encodes a PONG answering the PING with `id`. */
export function encodePong(id: number, state: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + 1);
  writeHeader(out, 0, out.length, FrameKind.PONG, 0, id);
  out[HEADER_BYTES] = state;
  return out;
}

/** Encodes a HELLO_ACK; `name` is cut to 255 bytes. */
export function encodeHelloAck(version: number, state: number, maxInflight: number, name: string): Buffer {
  const text = Buffer.from(name, 'utf8').subarray(0, 255);
  const out = Buffer.alloc(HEADER_BYTES + 9 + text.length);
  writeHeader(out, 0, out.length, FrameKind.HELLO_ACK, 0, 0);
  out[HEADER_BYTES] = version;
  out[HEADER_BYTES + 1] = state;
  out.writeUInt32BE(maxInflight, HEADER_BYTES + 4);
  out[HEADER_BYTES + 8] = text.length;
  text.copy(out, HEADER_BYTES + 9);
  return out;
}

/** Writes a version-1 header at `start` for a frame of `total` bytes (header included). */
function writeHeader(buf: Buffer, start: number, total: number, kind: number, flags: number, id: number): void {
  buf.writeUInt32BE(total - 4, start);
  buf[start + 4] = PROTOCOL_VERSION;
  buf[start + 5] = kind;
  buf.writeUInt16BE(flags, start + 6);
  buf.writeUInt32BE(id >>> 0, start + 8);
}
