const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const COLON = 0x3a;
/** "HTTP/1." — the status line's fixed start (RFC 9112 §4). */
const HTTP_1 = Buffer.from('HTTP/1.', 'latin1');
/** Length of "Content-Length", the shorter of the two header names the reader looks at. */
const SHORTEST_NAME = 14;

/**
 * Incremental reader of one HTTP/1.x response (RFC 9112) for health checks: the status code,
 * then — only when a check looks at the body — up to `bodyLimit` bytes of the body, delimited by
 * Content-Length, chunked transfer coding (§7.1) or the end of the connection. It keeps no more
 * than the head and the limited body, and never throws: malformed input is a failure reason.
 */
export class HttpResponseReader {
  /** Status code once the head is complete (0 before). */
  status = 0;
  /** Set when the response cannot be read; the check fails with it. */
  error = '';
  private head: Buffer = EMPTY;
  private headDone = false;
  private readonly body: Buffer[] = [];
  private bodySize = 0;
  private bodyDone = false;
  /** Remaining Content-Length bytes, or −1 when the body runs to the end of the connection. */
  private remaining = -1;
  private chunked = false;
  /** Chunked decoding: bytes left in the current chunk, or −1 while reading a size line. */
  private chunkLeft = -1;
  private line = '';

  /**
   * @param bodyLimit bytes of body kept (the rest is not needed to judge a check)
   * @param noBody true for responses that have none (HEAD requests; RFC 9112 §6.3)
   */
  constructor(
    private readonly bodyLimit: number,
    private readonly noBody: boolean,
  ) {}

  /** True once the status line and headers have been read. */
  get headComplete(): boolean {
    return this.headDone;
  }

  /** True once the body is complete or `bodyLimit` bytes of it were read. */
  get bodyComplete(): boolean {
    return this.bodyDone;
  }

  /** The body read so far (at most `bodyLimit` bytes), as UTF-8. */
  bodyText(): string {
    return Buffer.concat(this.body).subarray(0, this.bodyLimit).toString('utf8');
  }

  /**
   * Feeds bytes from the connection. The chunk is only borrowed: what the reader keeps (an
   * incomplete head, body bytes) is copied, so the caller may reuse one read buffer for every
   * connection (`net.connect`'s `onread`).
   */
  push(chunk: Buffer): void {
    if (this.error || this.bodyDone) return;
    if (!this.headDone) {
      // Usually the whole head arrives in the first chunk: then it is parsed in place, uncopied.
      const head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
      const end = head.indexOf(HEAD_END);
      if (end < 0) {
        if (head.length > 16 * 1024) this.error = 'response head larger than 16 KiB';
        else this.head = head === chunk ? Buffer.from(chunk) : head;
        return;
      }
      this.head = EMPTY;
      this.parseHead(head, end);
      if (this.interim()) {
        // RFC 9110 §15.2: a client parses interim 1xx responses (100 Continue, 103 Early Hints)
        // and waits for the final one, which follows on the same connection.
        if (end + 4 < head.length) this.push(head.subarray(end + 4));
        return;
      }
      if (this.error || this.bodyDone) return;
      if (end + 4 === head.length) return;
      chunk = head.subarray(end + 4);
    }
    if (this.chunked) this.pushChunked(chunk);
    else this.keep(this.remaining >= 0 ? chunk.subarray(0, this.remaining) : chunk);
    if (this.remaining >= 0 && !this.chunked) {
      this.remaining -= Math.min(this.remaining, chunk.length);
      if (this.remaining === 0) this.bodyDone = true;
    }
  }

  /**
   * After a head: when it was an interim 1xx response (except 101, which answers an Upgrade this
   * reader never asks for), forgets it and returns true, so the next head is read as the response.
   */
  private interim(): boolean {
    if (this.error || this.status < 100 || this.status > 199 || this.status === 101) return false;
    this.status = 0;
    this.headDone = false;
    this.bodyDone = false;
    this.chunked = false;
    this.remaining = -1;
    return true;
  }

  /** The connection ended: a body delimited by the end is complete; anything else is cut short. */
  end(): void {
    if (this.error || this.bodyDone) return;
    if (!this.headDone) this.error = 'connection closed before a complete response head';
    else if (this.chunked || this.remaining > 0) this.error = 'connection closed before the end of the body';
    else this.bodyDone = true;
  }

  /**
   * Reads the head in `head[0, end)` (up to the blank line) from its bytes: the status line is
   * matched byte by byte and only the header lines long enough to be `Content-Length` or
   * `Transfer-Encoding` become strings (a check reads thousands of heads a second, most of them
   * with neither name past a short one).
   */
  private parseHead(head: Buffer, end: number): void {
    const firstEnd = crlfIn(head, 0, end);
    const status = statusCode(head, firstEnd < 0 ? end : firstEnd);
    if (status < 0) {
      this.error = 'not an HTTP/1.x response';
      return;
    }
    this.status = status;
    this.headDone = true;
    let length = -1;
    for (let start = firstEnd + 2; firstEnd >= 0 && start <= end;) {
      const next = crlfIn(head, start, end);
      const lineStart = start;
      const lineEnd = next < 0 ? end : next;
      start = next < 0 ? end + 1 : next + 2;
      let colon = -1;
      for (let i = lineStart; i < lineEnd; i++) {
        if (head[i] === COLON) {
          colon = i - lineStart;
          break;
        }
      }
      if (colon <= 0) {
        this.error = 'malformed header line';
        return;
      }
      // Shorter than "content-length": neither header (trimming only shortens a name).
      if (colon < SHORTEST_NAME) continue;
      const l = head.toString('latin1', lineStart, lineEnd);
      const name = l.slice(0, colon).trim().toLowerCase();
      const value = l.slice(colon + 1).trim();
      if (name === 'transfer-encoding' && value.toLowerCase().split(',').pop()!.trim() === 'chunked') this.chunked = true;
      else if (name === 'content-length') {
        if (!/^\d+$/.test(value) || (length >= 0 && Number(value) !== length)) {
          this.error = 'invalid Content-Length';
          return;
        }
        length = Number(value);
      }
    }
    // RFC 9112 §6.3: no body for HEAD, 1xx, 204 and 304; chunked wins over Content-Length.
    if (this.noBody || this.status < 200 || this.status === 204 || this.status === 304) this.bodyDone = true;
    // A limit of 0: no body byte is wanted, so the response is read once its head is.
    else if (this.bodyLimit === 0) this.bodyDone = true;
    else if (!this.chunked && length >= 0) {
      this.remaining = length;
      if (length === 0) this.bodyDone = true;
    }
  }

  private pushChunked(data: Buffer): void {
    let i = 0;
    while (i < data.length && !this.bodyDone && !this.error) {
      if (this.chunkLeft > 0) {
        const take = Math.min(this.chunkLeft, data.length - i);
        this.keep(data.subarray(i, i + take));
        this.chunkLeft -= take;
        i += take;
        if (this.chunkLeft === 0) this.chunkLeft = -2;
        continue;
      }
      const nl = data.indexOf(0x0a, i);
      const piece = data.subarray(i, nl < 0 ? data.length : nl).toString('latin1');
      i = nl < 0 ? data.length : nl + 1;
      this.line += piece;
      if (this.line.length > 1024) {
        this.error = 'chunk size line too long';
        return;
      }
      if (nl < 0) return;
      const line = this.line.replace(/\r$/, '');
      this.line = '';
      if (this.chunkLeft === -2) {
        // The CRLF after a chunk's data.
        if (line !== '') this.error = 'missing CRLF after chunk data';
        this.chunkLeft = -1;
        continue;
      }
      const size = /^([0-9a-fA-F]+)(?:;.*)?$/.exec(line);
      if (!size) {
        this.error = 'invalid chunk size';
        return;
      }
      this.chunkLeft = parseInt(size[1]!, 16);
      if (this.chunkLeft === 0) this.bodyDone = true;
    }
  }

  private keep(data: Buffer): void {
    if (data.length === 0 || this.bodySize >= this.bodyLimit) {
      if (this.bodySize >= this.bodyLimit) this.bodyDone = true;
      return;
    }
    // A copy (the chunk is borrowed), of no more than the limit still needs.
    const kept = Buffer.from(data.subarray(0, this.bodyLimit - this.bodySize));
    this.body.push(kept);
    this.bodySize += kept.length;
    if (this.bodySize >= this.bodyLimit) this.bodyDone = true;
  }
}

/** Index of the first CRLF lying wholly in `buf[from, end)`, or −1. */
function crlfIn(buf: Buffer, from: number, end: number): number {
  for (let i = buf.indexOf(CR, from); i >= 0 && i + 1 < end; i = buf.indexOf(CR, i + 1)) {
    if (buf[i + 1] === LF) return i;
  }
  return -1;
}

/**
 * The status code of the status line `buf[0, end)` — `HTTP/1.0` or `HTTP/1.1`, a space, three
 * digits, then nothing or a space and a reason phrase without CR or LF (RFC 9112 §4) — or −1.
 */
function statusCode(buf: Buffer, end: number): number {
  if (end < 12 || buf.compare(HTTP_1, 0, HTTP_1.length, 0, HTTP_1.length) !== 0) return -1;
  const minor = buf[7]!;
  if ((minor !== 0x30 && minor !== 0x31) || buf[8] !== SP) return -1;
  let code = 0;
  for (let i = 9; i < 12; i++) {
    const d = buf[i]! - 0x30;
    if (d < 0 || d > 9) return -1;
    code = code * 10 + d;
  }
  if (end === 12) return code;
  if (buf[12] !== SP) return -1;
  for (let i = 13; i < end; i++) if (buf[i] === CR || buf[i] === LF) return -1;
  return code;
}
