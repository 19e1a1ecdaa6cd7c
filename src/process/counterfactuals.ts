import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve as resolvePath, sep } from 'node:path';
import { HypotheticalHealthView, HypotheticalMetricView } from '../admin/hypotheticalViews.js';
import { WhatIfError } from '../admin/whatIfRoutes.js';
import type { WhatIf } from '../admin/whatIfSchema.js';
import { ConfigError } from '../core/config/load.js';
import type { Engine } from '../pipeline/engine.js';
import type { Snapshot, SnapshotState } from '../pipeline/snapshot.js';
import type { CompiledGslbRecord } from '../pipeline/selection/stage.js';
import { runInSlices, type Steps } from '../pipeline/selection/steps.js';
import { CAPABILITIES } from './capabilities.js';
import type { Config } from './configSchema.js';
import { compileInSlices, type ConfigReader } from './reloadPipeline.js';

/** What counterfactual snapshots are compiled from. */
export interface CounterfactualSources {
  readonly engine: Engine;
  /** The configuration the published snapshot was built from. */
  readonly running: () => Config;
  /** The reload pipeline's reader: a candidate is read, parsed and validated on its worker thread. */
  readonly reader: ConfigReader;
}

/**
 * Compiles the snapshot a hypothesis gives (`src/admin/whatIfSchema.ts`), off the query path and
 * without touching the live state: the running configuration, or a candidate file read through the
 * reload pipeline's worker (`reloadPipeline.ts`), compiled in slices over the live location data
 * and the live health and metric views with the hypothesis laid over them
 * (`src/admin/hypotheticalViews.ts`). Nothing is published, no capability prepares or commits
 * (a candidate is compiled over the running location data, health and metrics: its new endpoints
 * are unmonitored, hence up, unless the hypothesis says otherwise), and the probe-request queue is
 * left out (a hypothetical query asks no agent to measure). One compilation runs at a time; the
 * last result is kept while the hypothesis, the live snapshot and the candidate file are the same.
 */
export class Counterfactuals {
  private queue: Promise<unknown> = Promise.resolve();
  private last: { key: string; snapshot: Snapshot } | undefined;

  constructor(private readonly sources: CounterfactualSources) {}

  /**
   * The snapshot under `w`.
   * @throws WhatIfError for a candidate outside the configuration's directory or invalid, an
   *   unknown data center, endpoint or metric.
   */
  snapshot(w: WhatIf): Promise<Snapshot> {
    const result = this.queue.then(() => this.compile(w));
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async compile(w: WhatIf): Promise<Snapshot> {
    const live = this.sources.engine.snapshot;
    const candidate = w.config === undefined ? undefined : candidatePath(live.file, w.config);
    const key = JSON.stringify([w, live.generation, live.file, candidate && fileStamp(candidate)]);
    if (this.last?.key === key) return this.last.snapshot;
    let config = this.sources.running();
    let contentHashes: ReadonlyMap<string, string> | undefined;
    if (candidate !== undefined) {
      try {
        const read = await this.sources.reader.read(candidate);
        config = read.config;
        contentHashes = read.contentHashes;
      } catch (e) {
        if (e instanceof ConfigError) throw new WhatIfError(`candidate ${w.config}: ${e.message}`);
        throw e;
      }
    }
    const names = new Set(config.datacenters.map((d) => d.name));
    for (const dc of [...w.down.dcs, ...w.up.dcs, ...w.metrics.map((m) => m.dc)]) if (!names.has(dc)) throw new WhatIfError(`unknown data center "${dc}"`);
    const health = new HypotheticalHealthView(live.env.health, w);
    let metrics: HypotheticalMetricView;
    try {
      metrics = new HypotheticalMetricView(live.env.metrics, w, health);
    } catch (e) {
      throw new WhatIfError((e as Error).message);
    }
    const state: SnapshotState = {
      geo: live.env.geo,
      health,
      metrics,
      ...(live.env.proximity !== undefined ? { proximity: live.env.proximity } : {}),
    };
    const snapshot = await compileInSlices({
      file: candidate ?? live.file,
      config,
      capabilities: CAPABILITIES,
      state,
      nowMs: Date.now(),
      previous: live,
      contentHashes,
    });
    const keys = await runInSlices(endpointKeysSteps(snapshot.records));
    for (const k of [...w.down.endpoints, ...w.up.endpoints])
      if (!keys.has(k)) throw new WhatIfError(`unknown endpoint "${k}" (service/dc/address of an endpoint a record answers with)`);
    health.know(keys);
    this.last = { key, snapshot };
    return snapshot;
  }
}

/**
 * The absolute path of a candidate configuration named relative to the running one's directory.
 * @throws WhatIfError when it is not a file inside that directory (after symbolic links).
 */
function candidatePath(runningFile: string, name: string): string {
  const dir = realpathSync(dirname(runningFile));
  let path: string;
  try {
    path = realpathSync(resolvePath(dir, name));
  } catch {
    throw new WhatIfError(`candidate ${name}: no such file`);
  }
  const rel = relative(dir, path);
  if (rel === '' || rel.split(sep)[0] === '..' || isAbsolute(rel))
    throw new WhatIfError(`candidate ${name}: only files under the running configuration's directory may be named`);
  return path;
}

/** Size and modification time: a changed candidate is compiled again. */
function fileStamp(path: string): string {
  const s = statSync(path);
  return `${s.size}/${s.mtimeMs}`;
}

/** Records read between two yields of {@link endpointKeysSteps}. */
const KEYS_STEP = 256;

/**
 * The keys of the endpoints `records` answer with, in steps of {@link KEYS_STEP} records: over
 * 20,000 records one pass took 44-80 ms in one go, at every what-if compilation (issue 17).
 */
export function* endpointKeysSteps(records: readonly CompiledGslbRecord[]): Steps<Set<string>> {
  const keys = new Set<string>();
  let n = 0;
  for (const r of records) {
    for (const c of r.candidates) for (const e of c.endpoints) keys.add(e.key);
    if (++n % KEYS_STEP === 0) yield;
  }
  return keys;
}
