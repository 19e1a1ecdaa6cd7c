import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import { ConfigError } from '../core/config/load.js';
import { readCandidateConfig } from './candidateConfig.js';
import { splitForTransfer, type TransferChunk, type WorkerMessage, type WorkerRequest } from './transferChunks.js';

/**
 * The configuration worker of {@link ConfigReader} (`reloadPipeline.ts`): for each request, reads,
 * parses, validates and checks a configuration, then sends it back in pieces
 * (`transferChunks.ts`), one when the engine thread asks for it: Node delivers every queued
 * message in one turn of the receiving event loop, so pieces sent at once would be received as
 * one long block. The engine thread ends a worker whose heap a large read has grown
 * ({@link ConfigReader}); otherwise it lives as long as the engine: loading the modules costs about
 * half a second of CPU. Its priority is lowered before these modules load (`configWorkerEntry`).
 */

/** The pieces of the answer being sent, each sent when the engine thread asks for the next. */
let pending: { id: number; chunks: TransferChunk[]; next: number } | undefined;

parentPort!.on('message', (request: WorkerRequest) => {
  const post = (m: WorkerMessage): void => parentPort!.postMessage({ ...m, id: request.id });
  if (request.kind === 'next') {
    if (pending?.id !== request.id) return;
    const chunk = pending.chunks[pending.next++];
    if (chunk) post({ kind: 'chunk', path: chunk.path, items: chunk.items });
    else {
      pending = undefined;
      post({ kind: 'done', heapBytes: heapBytes() });
    }
    return;
  }
  const { file, text } = request;
  try {
    const candidate = readCandidateConfig(file, text);
    const { skeleton, chunks } = splitForTransfer(candidate.config);
    pending = { id: request.id, chunks, next: 0 };
    post({
      kind: 'head',
      skeleton,
      fingerprint: candidate.fingerprint,
      sharedHash: candidate.sharedHash,
      contentHashes: [...candidate.contentHashes],
      adminToken: candidate.adminToken,
    });
  } catch (e) {
    if (e instanceof ConfigError) post({ kind: 'error', file: e.file, problems: e.problems, heapBytes: heapBytes() });
    else post({ kind: 'error', message: (e as Error).message, heapBytes: heapBytes() });
  }
});

/** Heap in use (bytes): the engine thread ends a worker that a read left large (`RETIRE_HEAP_BYTES`). */
function heapBytes(): number {
  return getHeapStatistics().used_heap_size;
}
