import { isAbsolute, resolve as resolvePath } from 'node:path';
import { HypotheticalHealthView, HypotheticalMetricView } from '../admin/hypotheticalViews.js';
import type { ReplayRow } from '../admin/whatIfRoutes.js';
import { replayRows } from '../admin/replayRows.js';
import { whatIfSchema } from '../admin/whatIfSchema.js';
import { loadConfiguredLocationDb } from '../capabilities/geo/loadSources.js';
import { allUpHealthView } from '../core/views/healthView.js';
import { emptyMetricView } from '../core/views/metricView.js';
import { systemContext } from '../core/views/resolveContext.js';
import type { z } from 'zod';
import { loadConfigFile } from './loadConfig.js';
import { buildSnapshot } from './snapshot.js';

/** What `gslbd simulate --against FILE` replays: the two configuration files and a hypothesis over the state. */
export interface SimulationInput {
  /** The configuration the answers are compared against (as if it were running). */
  readonly against: string;
  /** The candidate configuration; absent: the `against` file itself under the hypothesis. */
  readonly candidate?: string;
  /** DCs or endpoints down or up, metric values (`src/admin/whatIfSchema.ts`; `config` is ignored: see `candidate`). */
  readonly whatIf?: z.input<typeof whatIfSchema>;
}

/**
 * Replays queries without a running engine: both configurations are read and validated as a start
 * would, compiled over the `against` file's location data and a state where every endpoint is up
 * and no metric was pushed (no monitor has run) — the hypothesis laid over it as the engine's
 * counterfactuals do — and asked through {@link replayRows}, the path of `POST /what-if/replay`.
 * So for the same state the rows equal the running engine's replay (tested with the engine's).
 * @throws ConfigError for an invalid file; Error for an unknown data center or metric in the hypothesis.
 */
export function simulateReplay(input: SimulationInput, queries: readonly { name: string; type: string; client: string }[]): ReplayRow[] {
  const against = resolvePath(input.against);
  const base = loadConfigFile(against);
  const candidateFile = input.candidate === undefined ? against : isAbsolute(input.candidate) ? input.candidate : resolvePath(input.candidate);
  const candidate = candidateFile === against ? base : loadConfigFile(candidateFile);
  const w = whatIfSchema.parse({ ...input.whatIf, config: undefined });
  const geo = loadConfiguredLocationDb(base.config.geo, against).db;
  const nowMs = Date.now();
  const baseSnapshot = buildSnapshot(against, base.config, { geo, health: allUpHealthView, metrics: emptyMetricView }, nowMs);
  const names = new Set(candidate.config.datacenters.map((d) => d.name));
  for (const dc of [...w.down.dcs, ...w.up.dcs, ...w.metrics.map((m) => m.dc)]) if (!names.has(dc)) throw new Error(`unknown data center "${dc}"`);
  const health = new HypotheticalHealthView(allUpHealthView, w);
  const metrics = new HypotheticalMetricView(emptyMetricView, w, health);
  const whatIfSnapshot = buildSnapshot(candidateFile, candidate.config, { geo, health, metrics }, nowMs, baseSnapshot);
  health.know(whatIfSnapshot.records.flatMap((r) => r.candidates.flatMap((c) => c.endpoints.map((e) => e.key))));
  return replayRows(baseSnapshot, whatIfSnapshot, systemContext(), queries);
}
