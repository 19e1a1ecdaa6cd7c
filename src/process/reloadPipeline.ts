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
 * Reads candidate configurations ({@link readCandidateConfig}, `candidateConfig.ts`) on one
 * long-lived worker thread, one request at a time: the event loop only receives the result, in
 * pieces. The worker starts with the first request (or {@link ConfigReader.warm}) and does not
 * keep the process alive; it is started again if it dies.
 */
export class ConfigReader {
  private worker: Worker | undefined;
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();

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
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private ensure(): Worker {
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

  private readNow(file: string, text: string | undefined): Promise<CandidateConfig> {
    const worker = this.ensure();
    const id = this.nextId++;
    return new Promise<CandidateConfig>((done, fail) => {
      let head: Extract<WorkerMessage, { kind: 'head' }> | undefined;
      const finish = (): void => {
        worker.unref();
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
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
            finish();
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
            finish();
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
 * Starts `configWorker`. Under tsx (tests, development) the worker registers tsx first: workers do
 * not inherit `--import` hooks on Node 20 (as `src/capabilities/geo/loadSources.ts` does).
 */
function configWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./configWorker.js', import.meta.url));
  const script = JSON.stringify(new URL('./configWorker.ts', import.meta.url).href);
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
