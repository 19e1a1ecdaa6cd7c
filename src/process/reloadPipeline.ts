import { setImmediate } from 'node:timers';
import { Worker } from 'node:worker_threads';
import { ConfigError } from '../core/config/load.js';
import { compileSnapshotSteps, type Snapshot, type SnapshotInput } from '../pipeline/snapshot.js';
import { runInSlices, SLICE_MS } from '../pipeline/selection/steps.js';
import type { CandidateConfig } from './candidateConfig.js';
import type { Config } from './configSchema.js';
import { applyChunk, type WorkerMessage, type WorkerRequest } from './transferChunks.js';

/**
 * The reload pipeline: a configuration becomes a snapshot without holding the event loop, so
 * every front door keeps answering from the running snapshot while a large file is read.
 *
 * 1. {@link ConfigReader}: read (a regular file under its cap), parse, validate and
 *    check the files it names on a worker thread (YAML parsing and validation cost about 2.5 s per
 *    MB); the validated configuration comes back in pieces, one per turn of the event loop
 *    (`transferChunks.ts`).
 * 2. The capabilities prepare their state on the engine thread (location data is built on its own
 *    worker, `src/capabilities/geo/loadSources.ts`).
 * 3. {@link compileInSlices}: the snapshot is compiled in slices of a few milliseconds
 *    (`compileSnapshotSteps`), yielding to other events between them; compiled records hold
 *    closures and tables that cannot cross threads.
 * 4. The caller publishes the finished snapshot in one reference swap.
 */

/**
 * Heap in use (bytes) past which a configuration worker is ended after its read and a fresh one
 * started for the next. A 20,000-record read leaves about 170 MB in the worker's heap, which an
 * idle worker keeps until its next read: the engine's RSS 15 s after such reloads was 587 and
 * 552 MB with the worker ended, 668 and 659 MB with it kept (issue 17; docs/BENCHMARKS.md,
 * "reload"; no effect on the reload's event-loop delay could be told from the run-to-run spread).
 * Below it a worker is kept: a small configuration leaves about 25 MB (examples/quickstart.yaml),
 * and starting a worker costs about half a second of CPU.
 */
export const RETIRE_HEAP_BYTES = 64 * 1024 * 1024;

/** How long after a worker is ended its replacement starts (ms): after the reload's compile, not beside it. */
const REPLACEMENT_DELAY_MS = 5000;

/**
 * Reads candidate configurations ({@link readCandidateConfig}, `candidateConfig.ts`) on a worker
 * thread, one request at a time: the event loop only receives the result, in pieces. The worker
 * starts with the first request (or {@link ConfigReader.warm}), does not keep the process alive and
 * is started again if it dies. A worker whose heap a read has grown past {@link RETIRE_HEAP_BYTES}
 * is ended, and a fresh one started REPLACEMENT_DELAY_MS later (or by the next request).
 */
export class ConfigReader {
  private worker: Worker | undefined;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private replacement: NodeJS.Timeout | undefined;
  private closed = false;

  /**
   * @param retireHeapBytes heap in use after a read past which its worker is ended (bytes).
   */
  constructor(private readonly retireHeapBytes = RETIRE_HEAP_BYTES) {}

  /** Starts the worker now, so the first reload does not wait for its modules to load. */
  warm(): void {
    this.ensure();
  }

  /**
   * Reads `file` (or parses `text` as its contents: a candidate not on disk; relative paths stay
   * relative to `file`).
   * @throws ConfigError listing every problem (unreadable or oversized file, YAML, schema, files the
   *   configuration names); Error when the worker fails.
   */
  read(file: string, text?: string): Promise<CandidateConfig> {
    const result = this.queue.then(() => this.readNow(file, text));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Ends the worker (engine stop). */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.replacement);
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private ensure(): Worker {
    clearTimeout(this.replacement);
    if (this.worker) return this.worker;
    const w = configWorker();
    w.unref();
    w.on('error', () => undefined);
    w.once('exit', () => {
      if (this.worker === w) this.worker = undefined;
    });
    this.worker = w;
    return w;
  }

  /** Ends `w` and starts its replacement after REPLACEMENT_DELAY_MS, unless a request starts one first. */
  private retire(w: Worker): void {
    if (this.worker === w) this.worker = undefined;
    void w.terminate();
    if (this.closed) return;
    this.replacement = setTimeout(() => this.ensure(), REPLACEMENT_DELAY_MS).unref();
  }

  private readNow(file: string, text: string | undefined): Promise<CandidateConfig> {
    const worker = this.ensure();
    const id = this.nextId++;
    return new Promise<CandidateConfig>((done, fail) => {
      let head: Extract<WorkerMessage, { kind: 'head' }> | undefined;
      /** `heapBytes`: the worker's heap at the end of the read (`RETIRE_HEAP_BYTES`); undefined when the worker failed. */
      const finish = (heapBytes?: number): void => {
        worker.unref();
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (heapBytes !== undefined && heapBytes > this.retireHeapBytes) this.retire(worker);
      };
      const onMessage = (m: WorkerMessage): void => {
        if (m.id !== id) return;
        switch (m.kind) {
          case 'head':
            head = m;
            askNext();
            return;
          case 'chunk':
            applyChunk(head!.skeleton, m);
            askNext();
            return;
          case 'done':
            finish(m.heapBytes);
            done({
              file,
              config: head!.skeleton as Config,
              fingerprint: head!.fingerprint,
              sharedHash: head!.sharedHash,
              contentHashes: new Map(head!.contentHashes),
              adminToken: head!.adminToken,
            });
            return;
          case 'error':
            finish(m.heapBytes);
            fail('problems' in m ? new ConfigError(m.file, m.problems) : new Error(m.message));
            return;
        }
      };
      const onError = (e: Error): void => {
        finish();
        fail(e);
      };
      const onExit = (code: number): void => {
        finish();
        fail(new Error(`configuration worker exited with code ${code}`));
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.ref();
      // The next piece is asked for after other events had their turn.
      const askNext = (): void => void setImmediate(() => worker.postMessage({ kind: 'next', id } satisfies WorkerRequest));
      worker.postMessage({ kind: 'read', id, file, text } satisfies WorkerRequest);
    });
  }
}

/**
 * Starts `configWorkerEntry`. Under tsx (tests, development) the worker registers tsx first: workers do
 * not inherit `--import` hooks on Node 20 (as `src/capabilities/geo/loadSources.ts` does).
 */
function configWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./configWorkerEntry.js', import.meta.url));
  const script = JSON.stringify(new URL('./configWorkerEntry.ts', import.meta.url).href);
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${script}); });`, { eval: true });
}

/**
 * Compiles a snapshot in slices of about `sliceMs` milliseconds (`compileSnapshotSteps`: one
 * record or a few hundred zone entries per step), giving the event loop a turn between slices.
 * The young generation is scavenged after each slice, while it holds one slice's objects
 * (`collectYoungGeneration`). The result equals `compileSnapshot(input)`.
 */
export function compileInSlices(input: SnapshotInput<Config>, sliceMs = SLICE_MS): Promise<Snapshot> {
  return runInSlices(compileSnapshotSteps(input), sliceMs, { collectYoung: true });
}
