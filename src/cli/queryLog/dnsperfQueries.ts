import dnsTypes from 'dns-packet/types.js';
import { ecsOptionClient, queryQuestion } from './queryMessage.js';
import { QueryCounter, QueryFileError, type QueryFileContent } from './countedQueries.js';

/** How the queries of a dnsperf file reach the engine, as dnsperf's own options say it. */
export interface DnsperfOptions {
  /**
   * dnsperf's `-E CODE:HEX` (an EDNS option added to every query): with code 8 the ECS option
   * (RFC 7871 §6) whose prefix is every text line's client. Other codes are read and ignored.
   */
  readonly edns?: string | undefined;
  /** The client of a query without ECS: the address dnsperf sends from (`-a`); default `127.0.0.1`. */
  readonly source?: string | undefined;
}

/** The client of a query without ECS when no `source` is given: dnsperf's source address on loopback. */
export const DNSPERF_DEFAULT_SOURCE = '127.0.0.1';

/**
 * The queries of a dnsperf data file in text (`dnsperf -d FILE`): one `NAME TYPE` a line (dnsperf
 * 2.x, `man dnsperf` "Input file format"; a trailing dot is dropped, the type is a mnemonic or
 * `TYPEnnn`), `;` comment lines and blank lines skipped. dnsperf 2.x has no per-line EDNS: the ECS of
 * every line is the `-E 8:HEX` option ({@link DnsperfOptions.edns}), else the client is the source address.
 * @throws QueryFileError naming the line of a line dnsperf would refuse (leading blank, one field, unknown type), or an invalid `edns`.
 */
export function readDnsperfText(file: string, text: string, options: DnsperfOptions = {}): QueryFileContent {
  const client = textClient(file, options);
  const counter = new QueryCounter();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '' || line.startsWith(';')) continue;
    const fields = line.split(/[ \t]+/);
    if (fields[0] === '' || fields.length < 2) throw new QueryFileError(file, 'line', i + 1, `not "NAME TYPE": ${JSON.stringify(line.slice(0, 80))}`);
    const type = queryType(fields[1]!);
    if (type === undefined) throw new QueryFileError(file, 'line', i + 1, `unknown query type ${JSON.stringify(fields[1]!.slice(0, 40))}`);
    counter.add(fields[0]!.length > 1 ? fields[0]!.replace(/\.$/, '') : fields[0]!, type, client);
  }
  return counter.content();
}

/**
 * The queries of a dnsperf data file in its binary form (`dnsperf -B -d FILE`: each query a DNS
 * message in wire format after a 2-octet length, as over TCP, RFC 1035 §4.2.2): the ECS option of
 * each message is its client (dnsperf sends the messages as they are), else the source address.
 * Messages that are not queries are skipped.
 * @throws QueryFileError with the byte offset of a length that runs past the end of the file.
 */
export function readDnsperfBinary(file: string, bytes: Buffer, options: DnsperfOptions = {}): QueryFileContent {
  const source = sourceClient(options.source);
  const counter = new QueryCounter();
  let offset = 0;
  while (offset < bytes.length) {
    if (offset + 2 > bytes.length) throw new QueryFileError(file, 'byte', offset, 'a length prefix cut short by the end of the file');
    const length = bytes.readUInt16BE(offset);
    if (offset + 2 + length > bytes.length) throw new QueryFileError(file, 'byte', offset, `a ${length}-octet message runs past the end of the file`);
    const q = queryQuestion(bytes.subarray(offset + 2, offset + 2 + length));
    if (q) counter.add(q.name, q.type, q.ecs ?? source);
    else counter.skipped++;
    offset += 2 + length;
  }
  return counter.content();
}

/** Whether bytes look like dnsperf's binary form: the first length-prefixed message is whole and a DNS query. */
export function isDnsperfBinary(bytes: Buffer): boolean {
  if (bytes.length < 14) return false;
  const length = bytes.readUInt16BE(0);
  return length >= 12 && 2 + length <= bytes.length && queryQuestion(bytes.subarray(2, 2 + length)) !== undefined;
}

/** A type as dnsperf reads it (mnemonic in any case, or `TYPEnnn`), in the mnemonic form the engine's replay reads; undefined when unknown. */
function queryType(text: string): string | undefined {
  const numeric = /^TYPE(\d{1,5})$/i.exec(text);
  if (numeric) {
    const n = Number(numeric[1]);
    if (n > 65535) return undefined;
    const name = dnsTypes.toString(n);
    return name.startsWith('UNKNOWN_') ? `TYPE${n}` : name;
  }
  return dnsTypes.toType(text.toUpperCase()) === 0 ? undefined : text.toUpperCase();
}

function textClient(file: string, options: DnsperfOptions): string {
  if (options.edns === undefined) return sourceClient(options.source);
  const m = /^(\d{1,5}):((?:[0-9a-fA-F]{2})*)$/.exec(options.edns);
  if (!m) throw new Error(`${file}: EDNS option ${JSON.stringify(options.edns)} is not CODE:HEX (dnsperf -E)`);
  if (Number(m[1]) !== 8) return sourceClient(options.source);
  try {
    return ecsOptionClient(Buffer.from(m[2]!, 'hex'));
  } catch (e) {
    throw new Error(`${file}: EDNS option ${options.edns}: ${(e as Error).message}`);
  }
}

function sourceClient(source: string | undefined): string {
  const address = source ?? DNSPERF_DEFAULT_SOURCE;
  return address.includes('/') ? address : `${address}/${address.includes(':') ? 128 : 32}`;
}
