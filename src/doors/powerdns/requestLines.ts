/**
 * Splits a byte stream into newline-terminated request lines, bounded in size. PowerDNS writes
 * one JSON document per request followed by exactly one `\n`, and never a raw newline inside one
 * (json11 escapes control characters), so LF is a safe separator (docs/notes/powerdns-remote-backend.md §2.1).
 */
export class RequestLines {
  private pending: Buffer | undefined;

  /** @param maxBytes longest accepted line in bytes, without its newline. */
  constructor(private readonly maxBytes: number) {}

  /**
   * Adds a chunk and returns the complete lines in it (UTF-8 text without the newline or a
   * trailing CR), or `oversized` when an unterminated line grows beyond the limit; after that
   * the stream is unusable (the caller closes the connection).
   */
  push(chunk: Buffer): string[] | 'oversized' {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    const lines: string[] = [];
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      if (nl - start > this.maxBytes) return 'oversized';
      const end = nl > start && buf[nl - 1] === 13 ? nl - 1 : nl;
      lines.push(buf.toString('utf8', start, end));
      start = nl + 1;
    }
    if (buf.length - start > this.maxBytes) return 'oversized';
    this.pending = start < buf.length ? Buffer.from(buf.subarray(start)) : undefined;
    return lines;
  }

  /** A copy of the unterminated line's bytes (empty when none), for a replacement process to read first. */
  partial(): Buffer {
    return this.pending ? Buffer.from(this.pending) : Buffer.alloc(0);
  }

  /** Bytes of an unterminated line held (non-zero when the peer disconnects mid-request). */
  get partialBytes(): number {
    return this.pending?.length ?? 0;
  }
}
