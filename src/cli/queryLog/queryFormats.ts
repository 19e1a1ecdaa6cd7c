import { isDnsperfBinary, readDnsperfBinary, readDnsperfText, type DnsperfOptions } from './dnsperfQueries.js';
import type { QueryFileContent } from './countedQueries.js';

/** Options of the formats that cannot say everything themselves (dnsperf's text form carries no ECS). */
export type QueryFileOptions = DnsperfOptions;

/**
 * A query file format: how it is recognised from its first bytes and read. The readers of binary
 * captures are loaded only when a file needs them.
 */
interface QueryFileFormat {
  readonly name: string;
  readonly matches: (bytes: Buffer) => boolean;
  readonly read: (file: string, bytes: Buffer, options: QueryFileOptions) => Promise<QueryFileContent>;
}

/** The formats in the order they are tried; the first whose `matches` holds reads the file. */
const FORMATS: readonly QueryFileFormat[] = [
  { name: 'dnstap', matches: isFrameStream, read: async (file, bytes) => (await import('./dnstapQueries.js')).readDnstapQueries(file, bytes) },
  { name: 'pcap or pcapng capture', matches: isCapture, read: async (file, bytes) => (await import('./captureQueries.js')).readCaptureQueries(file, bytes) },
  { name: 'dnsperf binary', matches: isDnsperfBinary, read: async (file, bytes, o) => readDnsperfBinary(file, bytes, o) },
  { name: 'dnsperf text', matches: isDnsperfText, read: async (file, bytes, o) => readDnsperfText(file, bytes.toString('utf8'), o) },
];

/**
 * The queries of a file in one of {@link FORMATS}; undefined when none matches (the caller reads the
 * engine's own query log, JSON lines).
 * @throws QueryFileError naming the file and the offset of a damaged record; Error for invalid options.
 */
export function readQueryFormats(file: string, bytes: Buffer, options: QueryFileOptions = {}): Promise<QueryFileContent> | undefined {
  const format = FORMATS.find((f) => f.matches(bytes));
  return format?.read(file, bytes, options);
}

/**
 * Text none of whose first 64 KiB of lines starts a JSON object (the engine's log lines all do; a
 * stray line before them, such as a runtime warning, keeps a log a log): dnsperf's text form.
 */
function isDnsperfText(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 65536).toString('utf8');
  if (head.includes('\u0000')) return false;
  const lines = head.split('\n').filter((l) => l.trim() !== '' && !l.startsWith(';'));
  return head.trim() !== '' && !lines.some((l) => l.trimStart().startsWith('{'));
}

/** A libpcap capture (microsecond or nanosecond timestamps, either byte order) or a pcapng one, by its magic number. */
function isCapture(bytes: Buffer): boolean {
  return bytes.length >= 4 && (['a1b2c3d4', 'd4c3b2a1', 'a1b23c4d', '4d3cb2a1'].includes(bytes.toString('hex', 0, 4)) || bytes.readUInt32LE(0) === 0x0a0d0d0a);
}

/** A Frame Streams file (dnstap): an escape (a zero length) and a START control frame. */
function isFrameStream(bytes: Buffer): boolean {
  return bytes.length >= 12 && bytes.readUInt32BE(0) === 0 && bytes.readUInt32BE(8) === 0x02;
}
