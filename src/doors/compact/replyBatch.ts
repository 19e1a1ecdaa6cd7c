import { ANSWER_ROOM, writeAnswer, type AnswerFrame } from './frameCodec.js';

/** Bytes gathered before a batch is handed on mid-chunk (a burst larger than this is written in parts). */
const FLUSH_AT = 256 * 1024;
/** One buffer for every batch: a batch lives within one synchronous 'data' callback. */
const SHARED = Buffer.allocUnsafe(FLUSH_AT + ANSWER_ROOM);

/**
 * Gathers the frames answering one received chunk into one buffer, so a burst of queries costs
 * one socket write and no buffer per answer: ANSWER frames are encoded in place, other frames
 * copied in. Every batch shares one scratch buffer, so a batch must be flushed before its
 * callback returns (`flush` in a `finally`); `flush` hands the bytes to `write` as a new buffer.
 */
export class ReplyBatch {
  private length = 0;

  /** @param write receives each batch's bytes (e.g. `socket.write`). */
  constructor(private readonly write: (bytes: Buffer) => void) {}

  /** Adds an ANSWER frame for query `id`. */
  answer(id: number, a: AnswerFrame): void {
    if (this.length > FLUSH_AT) this.flush();
    this.length = writeAnswer(SHARED, this.length, id, a);
  }

  /** Adds an encoded frame. */
  frame(bytes: Buffer): void {
    if (this.length + bytes.length > FLUSH_AT) this.flush();
    if (bytes.length > FLUSH_AT) return this.write(bytes);
    bytes.copy(SHARED, this.length);
    this.length += bytes.length;
  }

  /** Hands the gathered bytes to `write`, if any. */
  flush(): void {
    if (this.length === 0) return;
    const out = Buffer.from(SHARED.subarray(0, this.length));
    this.length = 0;
    this.write(out);
  }

  /** Drops the gathered bytes (the connection is being destroyed). */
  discard(): void {
    this.length = 0;
  }
}
