import type { LoggedQuery } from './whatIfReplay.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
/** The keys read, in the order of the value ranges `fields` fills (start and end of each). */
const KEYS = ['component', 'qname', 'qtype', 'client'].map((k) => Buffer.from(k, 'latin1'));
const QUERY_LOG = Buffer.from('query-log', 'latin1');

/**
 * The distinct queries of the engine's query log, read from its bytes without parsing each line
 * into objects: one pass per line over its top-level JSON keys (strings skipped whole, nested
 * objects and arrays stepped over) finds `component`, `qname`, `qtype` and `client`; a line
 * counts when `component` is `query-log` and the three others are strings. Distinct (qname,
 * qtype, client) are found by hashing their bytes into an open-addressing table over the buffer,
 * so a line already seen allocates nothing; strings are made once per distinct query (JSON
 * escapes decoded). Lines that are not such JSON objects are skipped (a damaged line with the
 * four fields still counts, and a line is read only up to the last of them: the log is the
 * engine's own, which writes them among its first keys).
 * @returns the queries in first-seen order with their counts, and the non-empty lines skipped.
 */
export function scanQueryLog(bytes: Uint8Array): { queries: LoggedQuery[]; skipped: number } {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const table = new DistinctTable(buf);
  /** Start and end of each key's value in the current line, by the indexes of {@link KEYS}. */
  const at = new Int32Array(8);
  let skipped = 0;
  let start = 0;
  while (start < buf.length) {
    let end = buf.indexOf(NEWLINE, start);
    if (end < 0) end = buf.length;
    if (!blank(buf, start, end)) {
      if (fields(buf, start, end, at) && equalAt(buf, at[0]!, at[1]!, QUERY_LOG)) {
        table.add(at);
      } else skipped++;
    }
    start = end + 1;
  }
  return { queries: table.queries(), skipped };
}

function blank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/**
 * Fills `at` with the value range (inside the quotes) of each of the four keys at the top level
 * of the JSON object on [start, end). False when the line is not an object or a key is missing or
 * not a string; the line is read only up to the last of the four (a line cut after them counts).
 */
function fields(buf: Buffer, start: number, end: number, at: Int32Array): boolean {
  at.fill(-1);
  let i = start;
  while (i < end && buf[i] !== 0x7b) {
    if (buf[i] !== 0x20 && buf[i] !== 0x09) return false;
    i++;
  }
  let depth = 0;
  let keyNext = false;
  let pending = -1;
  for (; i < end; i++) {
    const b = buf[i]!;
    if (b === QUOTE) {
      let j = i + 1;
      while (j < end && buf[j] !== QUOTE) j += buf[j] === BACKSLASH ? 2 : 1;
      if (j >= end) return false;
      if (depth === 1) {
        if (keyNext) {
          pending = keyIndex(buf, i + 1, j);
          keyNext = false;
        } else if (pending >= 0) {
          at[pending * 2] = i + 1;
          at[pending * 2 + 1] = j;
          pending = -1;
          // The rest of the line is not read once the four are found (the engine writes them early).
          if (at[1]! >= 0 && at[3]! >= 0 && at[5]! >= 0 && at[7]! >= 0) return true;
        }
      }
      i = j;
    } else if (b === 0x7b || b === 0x5b) {
      depth++;
      if (depth === 1) keyNext = true;
      pending = -1;
    } else if (b === 0x7d || b === 0x5d) {
      depth--;
    } else if (b === 0x2c) {
      if (depth === 1) keyNext = true;
    } else if (b !== 0x3a && b !== 0x20 && b !== 0x09 && b !== 0x0d) {
      // A number, true, false or null: not a string value.
      if (depth === 1) pending = -1;
    }
  }
  return depth === 0 && at[1]! >= 0 && at[3]! >= 0 && at[5]! >= 0 && at[7]! >= 0;
}

function keyIndex(buf: Buffer, start: number, end: number): number {
  for (let k = 0; k < KEYS.length; k++) if (equalAt(buf, start, end, KEYS[k]!)) return k;
  return -1;
}

/**
 * True when `buf[start, end)` holds `want`'s bytes. A loop here rather than `Buffer.compare`:
 * the ranges are a few bytes, and a call into the runtime per key costs more than the comparison.
 */
function equalAt(buf: Buffer, start: number, end: number, want: Uint8Array): boolean {
  if (end - start !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (buf[start + i] !== want[i]) return false;
  return true;
}

/** Distinct (qname, qtype, client) byte ranges of one buffer, with counts, in first-seen order. */
class DistinctTable {
  /** Per distinct query: six offsets (qname, qtype, client: start and end). */
  private ranges = new Int32Array(6 * 1024);
  private counts = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  private size = 0;
  /** Open addressing: distinct index + 1, 0 empty. */
  private slots = new Int32Array(2048);

  constructor(private readonly buf: Buffer) {}

  add(at: Int32Array): void {
    const h = this.hash(at);
    const mask = this.slots.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const d = this.slots[s]!;
      if (d === 0) {
        this.insert(s, h, at);
        return;
      }
      if (this.hashes[d - 1] === h && this.same(d - 1, at)) {
        this.counts[d - 1]!++;
        return;
      }
    }
  }

  queries(): LoggedQuery[] {
    const out: LoggedQuery[] = [];
    for (let d = 0; d < this.size; d++) {
      const r = d * 6;
      out.push({
        name: this.text(this.ranges[r]!, this.ranges[r + 1]!),
        type: this.text(this.ranges[r + 2]!, this.ranges[r + 3]!),
        client: this.text(this.ranges[r + 4]!, this.ranges[r + 5]!),
        count: this.counts[d]!,
      });
    }
    return out;
  }

  /** FNV-1a over the three values, a separator between them. */
  private hash(at: Int32Array): number {
    const buf = this.buf;
    let h = 0x811c9dc5;
    for (let f = 2; f < 8; f += 2) {
      for (let i = at[f]!; i < at[f + 1]!; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
      h = Math.imul(h ^ 0xff, 0x01000193);
    }
    return h;
  }

  private same(d: number, at: Int32Array): boolean {
    const buf = this.buf;
    const r = d * 6;
    for (let f = 0; f < 3; f++) {
      const s = this.ranges[r + f * 2]!;
      const e = this.ranges[r + f * 2 + 1]!;
      const s2 = at[2 + f * 2]!;
      if (e - s !== at[3 + f * 2]! - s2) return false;
      for (let i = 0; i < e - s; i++) if (buf[s + i] !== buf[s2 + i]) return false;
    }
    return true;
  }

  private insert(slot: number, h: number, at: Int32Array): void {
    const d = this.size++;
    if (d >= this.counts.length) {
      this.ranges = grow(this.ranges, this.ranges.length * 2);
      this.counts = grow(this.counts, this.counts.length * 2);
      this.hashes = grow(this.hashes, this.hashes.length * 2);
    }
    this.ranges.set(at.subarray(2, 8), d * 6);
    this.counts[d] = 1;
    this.hashes[d] = h;
    this.slots[slot] = d + 1;
    if (this.size * 2 > this.slots.length) this.rehash();
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let d = 0; d < this.size; d++) {
      let s = this.hashes[d]! & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = d + 1;
    }
    this.slots = slots;
  }

  /** A value as a string, JSON escapes decoded. */
  private text(start: number, end: number): string {
    const raw = this.buf.toString('utf8', start, end);
    return raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
  }
}

function grow(a: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(length);
  b.set(a);
  return b;
}

/**
 * The distinct queries of a query log: the JSON lines the DNS front door writes for sampled
 * queries (`component: "query-log"`, with `qname`, `qtype` and `client` truncated to /24 or /48,
 * `src/doors/dns/handleMessage.ts`); other lines (every other log line of the engine) are skipped.
 * Read from the bytes without an object per line ({@link scanQueryLog}).
 * @returns the queries in first-seen order, and how many lines were skipped as not query-log JSON.
 */
export function readQueryLog(text: string | Uint8Array): { queries: LoggedQuery[]; skipped: number } {
  return scanQueryLog(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
}
