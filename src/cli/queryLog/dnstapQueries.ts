import protobuf from 'protobufjs';
import { QueryCounter, QueryFileError, type QueryFileContent } from './countedQueries.js';
import { addressText, queryQuestion } from './queryMessage.js';

/**
 * The part of the dnstap schema read here (dnstap.proto of the dnstap project, public domain under
 * CC0 1.0; field numbers and types as there, the fields not read left out: protobuf skips them).
 */
const DNSTAP_SCHEMA = `
syntax = "proto2";
package dnstap;
message Dnstap {
  enum Type { MESSAGE = 1; }
  required Type type = 15;
  optional Message message = 14;
}
message Message {
  required uint32 type = 1;
  optional bytes query_address = 4;
  optional bytes query_message = 10;
}
`;

/** dnstap Message types read: queries as the server that received them saw them (CLIENT_QUERY at a resolver, AUTH_QUERY at an authoritative server). */
const AUTH_QUERY = 1;
const CLIENT_QUERY = 5;

/** The Frame Streams content type of dnstap (fstrm's START control frame names it). */
const CONTENT_TYPE = 'protobuf:dnstap.Dnstap';

let dnstapType: protobuf.Type | undefined;

/**
 * The DNS queries of a dnstap file: Frame Streams (fstrm's unidirectional file: an escape and START
 * control frame with content type `protobuf:dnstap.Dnstap`, data frames each a 4-octet length and a
 * protobuf `Dnstap`, a STOP control frame), as `fstrm_capture` writes what unbound, BIND or CoreDNS
 * send, or BIND's `dnstap-output file` writes. Each CLIENT_QUERY and AUTH_QUERY message with a
 * query message is a query; its client is the query's ECS prefix, else `query_address` (`/32`,
 * `/128`). Other messages (responses, the queries a resolver or forwarder sent on) are skipped.
 * Frame Streams is read here (it is a few length fields; the npm frame-stream package reads only
 * plain length-prefixed frames, not fstrm's control frames); the protobuf by protobufjs.
 * @throws QueryFileError with the byte offset of a frame cut short, a control frame out of place, another content type, or a frame that is not a `Dnstap`.
 */
export function readDnstapQueries(file: string, bytes: Buffer): QueryFileContent {
  dnstapType ??= protobuf.parse(DNSTAP_SCHEMA, { keepCase: true }).root.lookupType('dnstap.Dnstap');
  const counter = new QueryCounter();
  let offset = 0;
  let started = false;
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw new QueryFileError(file, 'byte', offset, 'a frame length cut short by the end of the file');
    const length = bytes.readUInt32BE(offset);
    if (length === 0) {
      // An escape: a control frame follows (length, type, then fields of type, length, value).
      if (offset + 12 > bytes.length) throw new QueryFileError(file, 'byte', offset, 'a control frame cut short by the end of the file');
      const controlLength = bytes.readUInt32BE(offset + 4);
      if (controlLength < 4 || offset + 8 + controlLength > bytes.length)
        throw new QueryFileError(file, 'byte', offset, `a control frame of ${controlLength} octets does not fit the file`);
      const control = bytes.subarray(offset + 8, offset + 8 + controlLength);
      const kind = control.readUInt32BE(0);
      if (kind === 0x02) {
        const type = contentType(control);
        if (type !== undefined && type !== CONTENT_TYPE)
          throw new QueryFileError(file, 'byte', offset, `content type ${JSON.stringify(type)}, not ${CONTENT_TYPE}`);
        started = true;
      } else if (kind === 0x03) started = false;
      else throw new QueryFileError(file, 'byte', offset, `control frame type ${kind} in a file (only START and STOP belong there)`);
      offset += 8 + controlLength;
      continue;
    }
    if (!started) throw new QueryFileError(file, 'byte', offset, 'a data frame outside START and STOP');
    if (offset + 4 + length > bytes.length) throw new QueryFileError(file, 'byte', offset, `a ${length}-octet frame runs past the end of the file`);
    let event: { message?: { type: number; query_address?: Uint8Array; query_message?: Uint8Array } };
    try {
      event = dnstapType.decode(bytes.subarray(offset + 4, offset + 4 + length)) as typeof event;
    } catch (e) {
      throw new QueryFileError(file, 'byte', offset, `not a dnstap message: ${(e as Error).message}`);
    }
    const m = event.message;
    const q = m && (m.type === CLIENT_QUERY || m.type === AUTH_QUERY) && m.query_message ? queryQuestion(m.query_message) : undefined;
    const source =
      m?.query_address?.length === 4
        ? `${addressText(m.query_address)}/32`
        : m?.query_address?.length === 16
          ? `${addressText(m.query_address)}/128`
          : undefined;
    const client = q?.ecs ?? source;
    if (q && client) counter.add(q.name, q.type, client);
    else counter.skipped++;
    offset += 4 + length;
  }
  return counter.content();
}

/** The CONTENT_TYPE field (1) of a START control frame, undefined when it has none. */
function contentType(control: Buffer): string | undefined {
  let at = 4;
  while (at + 8 <= control.length) {
    const field = control.readUInt32BE(at);
    const length = control.readUInt32BE(at + 4);
    if (at + 8 + length > control.length) return undefined;
    if (field === 0x01) return control.toString('latin1', at + 8, at + 8 + length);
    at += 8 + length;
  }
  return undefined;
}
