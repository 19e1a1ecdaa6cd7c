/** Out-of-order segments kept per stream until the gap before them is filled; more end the stream's reassembly. */
const MAX_PENDING_SEGMENTS = 64;

interface Stream {
  /** The sequence number of the next octet expected. */
  next: number;
  /** Octets received in order and not yet framed into a message. */
  buffered: Buffer;
  readonly pending: Map<number, Buffer>;
  broken: boolean;
}

/**
 * DNS messages carried over TCP in a capture (RFC 1035 §4.2.2, RFC 7766 §8: each message after a
 * 2-octet length, several in one connection, one message across several segments): the segments of
 * each stream (one direction of one connection) are put back in sequence order from the SYN, or from
 * the first segment seen when the capture started mid-connection; retransmitted octets are dropped,
 * segments that arrive ahead of a gap are kept (at most 64 a stream) until it is filled.
 * Not reassembled: a stream with a gap that is never filled (a segment the capture lost) — its octets
 * after the gap are dropped; a capture that starts inside a message loses that stream's framing.
 */
export class TcpDnsStreams {
  private readonly streams = new Map<string, Stream>();

  /**
   * One segment of the stream `key` (source and destination address and port).
   * @param flags the TCP flags octet (SYN 0x02, FIN 0x01, RST 0x04).
   * @returns the whole messages this segment completes (possibly none).
   */
  segment(key: string, seq: number, flags: number, payload: Buffer): Buffer[] {
    if (flags & 0x02) {
      this.streams.set(key, { next: (seq + 1) >>> 0, buffered: Buffer.alloc(0), pending: new Map(), broken: false });
      return [];
    }
    let stream = this.streams.get(key);
    if (!stream && payload.length > 0) {
      stream = { next: seq, buffered: Buffer.alloc(0), pending: new Map(), broken: false };
      this.streams.set(key, stream);
    }
    const messages: Buffer[] = [];
    if (stream && !stream.broken && payload.length > 0) {
      this.accept(stream, seq, payload);
      for (let following = stream.pending.get(stream.next); following; following = stream.pending.get(stream.next)) {
        stream.pending.delete(stream.next);
        this.accept(stream, stream.next, following);
      }
      while (stream.buffered.length >= 2 && stream.buffered.length >= 2 + stream.buffered.readUInt16BE(0)) {
        const length = stream.buffered.readUInt16BE(0);
        messages.push(stream.buffered.subarray(2, 2 + length));
        stream.buffered = stream.buffered.subarray(2 + length);
      }
    }
    if (flags & 0x05) this.streams.delete(key);
    return messages;
  }

  private accept(stream: Stream, seq: number, payload: Buffer): void {
    const ahead = (seq - stream.next) | 0;
    if (ahead > 0) {
      if (stream.pending.size >= MAX_PENDING_SEGMENTS) stream.broken = true;
      else stream.pending.set(seq, payload);
      return;
    }
    // A retransmission: keep only the octets past those already received.
    if (-ahead >= payload.length) return;
    const fresh = payload.subarray(-ahead);
    stream.buffered = stream.buffered.length === 0 ? fresh : Buffer.concat([stream.buffered, fresh]);
    stream.next = (stream.next + fresh.length) >>> 0;
  }
}
