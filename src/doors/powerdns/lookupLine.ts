/** The parameters of a `lookup` request that gslbd uses (`local`, the server's own address, is not). */
export interface LookupLine {
  readonly qname: string;
  /** `qname` as a JSON string: the text between (and including) its quotes in the line. */
  readonly qnameJson: string;
  readonly qtype: string;
  readonly remote: string;
  readonly realRemote: string;
  /** `zone-id` (PowerDNS sends −1 when it has none). */
  readonly zoneId: number;
}

const PREFIX = '{"method": "lookup", "parameters": {"local": "';
/** The keys after `local`, in json11's order (alphabetical), each with the separator before its value. */
const QNAME = '", "qname": "';
const QTYPE = '", "qtype": "';
const REAL_REMOTE = '", "real-remote": "';
const REMOTE = '", "remote": "';
const ZONE_ID = '", "zone-id": ';

/**
 * Reads a `lookup` request line exactly as PowerDNS 4.x writes it, without `JSON.parse`: json11's
 * `dump()` of `{"method": "lookup", "parameters": {"local", "qname", "qtype", "real-remote",
 * "remote", "zone-id"}}` — keys in alphabetical order (a std::map), `": "` and `", "` separators,
 * no other whitespace (docs/notes/powerdns-remote-backend.md §2.1, §3.2). Parsing is most of what a lookup costs besides the
 * selection (every lookup of a GSLB name that is not a repeated line; src/doors/powerdns/README.md).
 *
 * Returns undefined for any line of another shape — another method, other or more keys, a string
 * holding a backslash (JSON escapes) or a control character, a zone id that is not a plain
 * integer, anything after the object — which then takes `JSON.parse`. Whatever it returns equals
 * what `JSON.parse` reads from the same line (remoteBackend's tests check it on many lines).
 */
export function parseLookupLine(line: string): LookupLine | undefined {
  if (!line.startsWith(PREFIX)) return undefined;
  let at = PREFIX.length;
  const localEnd = stringEnd(line, at);
  if (localEnd < 0 || !line.startsWith(QNAME, localEnd)) return undefined;
  const qnameStart = localEnd + QNAME.length;
  const qnameEnd = stringEnd(line, qnameStart);
  if (qnameEnd < 0 || !line.startsWith(QTYPE, qnameEnd)) return undefined;
  at = qnameEnd + QTYPE.length;
  const qtypeEnd = stringEnd(line, at);
  if (qtypeEnd < 0 || !line.startsWith(REAL_REMOTE, qtypeEnd)) return undefined;
  const realRemoteStart = qtypeEnd + REAL_REMOTE.length;
  const realRemoteEnd = stringEnd(line, realRemoteStart);
  if (realRemoteEnd < 0 || !line.startsWith(REMOTE, realRemoteEnd)) return undefined;
  const remoteStart = realRemoteEnd + REMOTE.length;
  const remoteEnd = stringEnd(line, remoteStart);
  if (remoteEnd < 0 || !line.startsWith(ZONE_ID, remoteEnd)) return undefined;
  const zoneId = integerBeforeEnd(line, remoteEnd + ZONE_ID.length);
  if (zoneId === undefined) return undefined;
  return {
    qname: line.slice(qnameStart, qnameEnd),
    qnameJson: line.slice(qnameStart - 1, qnameEnd + 1),
    qtype: line.slice(qnameEnd + QTYPE.length, qtypeEnd),
    realRemote: line.slice(realRemoteStart, realRemoteEnd),
    remote: line.slice(remoteStart, remoteEnd),
    zoneId,
  };
}

/**
 * The index of the quote that ends a JSON string whose text starts at `start`, or −1 when the
 * string holds a backslash or a control character (JSON.parse would read escapes or reject it),
 * a UTF-16 surrogate (so the text between the quotes is always what JSON.stringify writes), or
 * has no end.
 */
function stringEnd(line: string, start: number): number {
  for (let i = start; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34) return i;
    // Escapes, control characters and surrogates (JSON.stringify escapes lone ones) take JSON.parse.
    if (c === 92 || c < 32 || (c >= 0xd800 && c <= 0xdfff)) return -1;
  }
  return -1;
}

/**
 * A JSON integer (`-?(0|[1-9][0-9]*)`, at most 9 digits, so it is exact) at `start`, followed by
 * exactly `}}` and the end of the line; undefined otherwise.
 */
function integerBeforeEnd(line: string, start: number): number | undefined {
  const end = line.length - 2;
  if (end <= start || line.charCodeAt(end) !== 125 || line.charCodeAt(end + 1) !== 125) return undefined;
  let i = start;
  const negative = line.charCodeAt(i) === 45;
  if (negative) i++;
  const digits = end - i;
  if (digits < 1 || digits > 9 || (digits > 1 && line.charCodeAt(i) === 48)) return undefined;
  let v = 0;
  for (; i < end; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
    v = v * 10 + (c - 48);
  }
  return negative ? -v : v;
}
