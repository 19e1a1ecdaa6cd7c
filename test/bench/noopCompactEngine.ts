import { unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  EngineState,
  FrameKind,
  PROTOCOL_VERSION,
  decodeQuery,
  encodeHelloAck,
  encodePong,
  readHeader,
  type AnswerFrame,
  type CompactQuery,
} from '../../src/doors/compact/frameCodec.js';
import { FrameReader } from '../../src/doors/compact/frameReader.js';
import { ReplyBatch } from '../../src/doors/compact/replyBatch.js';

/**
 * The CoreDNS bridge's ceiling: a compact-protocol engine that does no work. It answers every
 * QUERY with one A record for the question name (AA, scope 24) through the engine's own frame
 * codec, reader and reply batching, so a benchmark row with it measures CoreDNS + the gslb plugin
 * + the protocol with the engine's cost taken out. The coredns group also calls
 * {@link noopAnswer} in-process, beside gslbd's answerer.
 *
 * Usage: `node noopCompactEngine.js <socket path>`; prints `ready` once listening.
 */

const none: never[] = [];

/** The do-nothing answer to a decoded QUERY. */
export function noopAnswer(q: CompactQuery): AnswerFrame {
  const answers = [{ name: q.qname, type: 'A' as const, ttl: 30, data: '198.51.100.10' }];
  return { rcode: 0, authoritative: true, notOurs: false, ecsScope: q.ecs ? 24 : 0, clientScope: 24, answers, authority: none, additional: none };
}

function serve(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // no stale socket
  }
  createServer((conn) => {
    const replies = new ReplyBatch((bytes) => conn.write(bytes));
    const reader = new FrameReader(4096, (frame) => {
      const h = readHeader(frame);
      if (h.kind === FrameKind.HELLO) replies.frame(encodeHelloAck(PROTOCOL_VERSION, EngineState.SERVING, 1024, 'noop'));
      else if (h.kind === FrameKind.PING) replies.frame(encodePong(h.id, EngineState.SERVING));
      else if (h.kind === FrameKind.QUERY) {
        const q = decodeQuery(frame, h.flags);
        if (typeof q !== 'string') replies.answer(h.id, noopAnswer(q));
      }
    });
    conn.on('data', (chunk: Buffer) => {
      reader.push(chunk);
      replies.flush();
    });
    conn.on('error', () => conn.destroy());
  }).listen(path, () => process.stdout.write('ready\n'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const path = process.argv[2];
  if (!path) {
    process.stderr.write('usage: noopCompactEngine.js <socket path>\n');
    process.exit(1);
  }
  serve(path);
  // An orderly exit on SIGTERM, so `--cpu-prof` writes its profile.
  process.once('SIGTERM', () => process.exit(0));
}
