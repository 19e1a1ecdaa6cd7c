import type { ConfigProblem } from '../core/config/load.js';

/** Arrays longer than this cross from the configuration worker in pieces of this many items. */
export const CHUNK_ITEMS = 250;

/** How deep {@link splitForTransfer} looks for long arrays (`zones[0].records` is depth 3). */
const MAX_DEPTH = 4;

/** One piece of a long array: where it goes in the skeleton (keys and indexes) and its items, in order. */
export interface TransferChunk {
  readonly path: readonly (string | number)[];
  readonly items: readonly unknown[];
}

/**
 * A request to the configuration worker: `read` `file` (or parse `text` as if it were its
 * contents), or send the `next` piece of the answer to request `id`.
 */
export type WorkerRequest =
  { readonly kind: 'read'; readonly id: number; readonly file: string; readonly text: string | undefined } | { readonly kind: 'next'; readonly id: number };

/** The messages of the configuration worker (`configWorker.ts`), in the order it sends them. */
export type WorkerMessage = (
  | {
      readonly kind: 'head';
      /** The configuration with every long array empty; the chunks fill them. */
      readonly skeleton: unknown;
      readonly fingerprint: string;
      readonly sharedHash: string;
      readonly contentHashes: readonly (readonly [string, string])[];
      readonly adminToken: string | undefined;
    }
  | ({ readonly kind: 'chunk' } & TransferChunk)
  | ({ readonly kind: 'done' } & ReadEnd)
  | ({ readonly kind: 'error'; readonly file: string; readonly problems: readonly ConfigProblem[] } & ReadEnd)
  | ({ readonly kind: 'error'; readonly message: string } & ReadEnd)
) & { readonly id?: number };

/** What the last message of a read says about the worker. */
interface ReadEnd {
  /** The worker's heap in use at the end of the read (bytes, `v8.getHeapStatistics().used_heap_size`). */
  readonly heapBytes: number;
}

/**
 * Splits plain data for `postMessage`: every array longer than {@link CHUNK_ITEMS} (down to
 * {@link MAX_DEPTH} levels) is emptied in the returned skeleton and its items returned in pieces.
 * Receiving a structured clone is synchronous on the receiving thread (a 20,000-record
 * configuration takes a few hundred milliseconds as one message); pieces of a few hundred items
 * take about a millisecond each, and other events run between them.
 */
export function splitForTransfer(value: unknown): { skeleton: unknown; chunks: TransferChunk[] } {
  const chunks: TransferChunk[] = [];
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (path.length > MAX_DEPTH || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      if (v.length > CHUNK_ITEMS) {
        for (let i = 0; i < v.length; i += CHUNK_ITEMS) chunks.push({ path, items: v.slice(i, i + CHUNK_ITEMS) });
        return [];
      }
      return v.map((item, i) => walk(item, [...path, i]));
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) return v;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) out[k] = walk(item, [...path, k]);
    return out;
  };
  return { skeleton: walk(value, []), chunks };
}

/** Appends a chunk's items to the (emptied) array at its path in `skeleton`. */
export function applyChunk(skeleton: unknown, chunk: TransferChunk): void {
  let target = skeleton as Record<string | number, unknown>;
  for (const key of chunk.path) target = target[key] as Record<string | number, unknown>;
  (target as unknown as unknown[]).push(...chunk.items);
}
