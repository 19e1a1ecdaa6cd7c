const EMPTY = Buffer.alloc(0);

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
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16 * 1024) this.error = 'response head larger than 16 KiB';
        else this.head = head === chunk ? Buffer.from(chunk) : head;
        return;
      }
      this.head = EMPTY;
      this.parseHead(head.toString('latin1', 0, end));
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

  private parseHead(text: string): void {
    const firstEnd = text.indexOf('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(firstEnd < 0 ? text : text.slice(0, firstEnd));
    if (!m) {
      this.error = 'not an HTTP/1.x response';
      return;
    }
    this.status = Number(m[1]);
    this.headDone = true;
    let length = -1;
    // Header lines one by one, without an array of them; only the two names that matter are
    // lower-cased (a check reads thousands of heads a second).
    for (let start = firstEnd + 2; firstEnd >= 0 && start <= text.length; ) {
      const lineEnd = text.indexOf('\r\n', start);
      const l = text.slice(start, lineEnd < 0 ? text.length : lineEnd);
      start = lineEnd < 0 ? text.length + 1 : lineEnd + 2;
      const colon = l.indexOf(':');
      if (colon <= 0) {
        this.error = 'malformed header line';
        return;
      }
      // Shorter than "content-length": neither header (trimming only shortens a name).
      if (colon < 14) continue;
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
