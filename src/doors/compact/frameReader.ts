import { MAX_FRAME_LENGTH, MIN_FRAME_LENGTH } from './frameCodec.js';

const EMPTY = Buffer.alloc(0);

/** A stream that cannot be split into frames any more: the connection must be closed. */
export class FramingError extends Error {}

/**
 * Splits a byte stream into whole frames (docs/protocol.md, Frames): each frame is handed to
 * `onFrame` as one buffer, header included, as soon as its last byte has arrived. Frames are
 * views into the received chunks (no copy) when a chunk holds them whole.
 */
export class FrameReader {
  private pending: Buffer = EMPTY;

  /**
   * @param maxLength largest `length` field accepted (bytes; at most {@link MAX_FRAME_LENGTH}).
   * @param onFrame called once per frame, in stream order.
   */
  constructor(
    private readonly maxLength: number,
    private readonly onFrame: (frame: Buffer) => void,
  ) {}

  /** Bytes of a frame not complete yet. */
  get partialBytes(): number {
    return this.pending.length;
  }

  /** A copy of the bytes of the frame not complete yet (empty when none), for a replacement process to read first. */
  partial(): Buffer {
    return Buffer.from(this.pending);
  }

  /**
   * Feeds received bytes.
   * @throws FramingError when a length field is below 8 or above the limit (nothing after it can
   *   be trusted).
   */
  push(chunk: Buffer): void {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (buf.length - offset >= 4) {
      const length = buf.readUInt32BE(offset);
      if (length < MIN_FRAME_LENGTH || length > Math.min(this.maxLength, MAX_FRAME_LENGTH)) {
        this.pending = EMPTY;
        throw new FramingError(`frame length ${length} outside ${MIN_FRAME_LENGTH}..${this.maxLength}`);
      }
      if (buf.length - offset < 4 + length) break;
      this.onFrame(buf.subarray(offset, offset + 4 + length));
      offset += 4 + length;
    }
    buf = buf.subarray(offset);
    this.pending = buf.length === 0 ? EMPTY : Buffer.from(buf);
  }
}
