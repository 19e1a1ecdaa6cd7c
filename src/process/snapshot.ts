import { compileSnapshot, type Snapshot, type SnapshotState } from '../pipeline/snapshot.js';
import { CAPABILITIES } from './capabilities.js';
import type { Config } from './configSchema.js';

/** How a snapshot is compiled, for tests and benchmarks that compare with the engine's default. */
export interface SnapshotOptions {
  /** False compiles without decision caches: the reference that always runs the pipeline. Default true. */
  readonly reuseDecisions?: boolean;
}

/**
 * Compiles a validated configuration into a snapshot with the engine's capabilities
 * (`capabilities.ts`). `previous` (the running snapshot on a reload) carries SOA serials forward.
 */
export function buildSnapshot(file: string, config: Config, state: SnapshotState, nowMs: number, previous?: Snapshot, options: SnapshotOptions = {}): Snapshot {
  return compileSnapshot<Config>({ file, config, capabilities: CAPABILITIES, state, nowMs, previous, reuseDecisions: options.reuseDecisions });
}
