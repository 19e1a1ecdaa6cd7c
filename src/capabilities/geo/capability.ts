import type { AdminRoute } from '../../core/contracts/adminRoute.js';
import type { ConfigProblem } from '../../core/config/load.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import type { Logger } from '../../core/telemetry/logger.js';
import type { Capability, CapabilityHost, CapabilityRuntime, EnvPart } from '../../pipeline/capability.js';
import { geoFileReferenceProblems } from './geoFileReferences.js';
import { geoSchema, type GeoConfig } from './geoSchema.js';
import { loadConfiguredLocationDb, reloadLocationDb, type ConfiguredLocationDb } from './loadSources.js';
import { runInSlices } from '../../pipeline/selection/steps.js';

/** What the geo capability reads of the configuration: its section. */
export interface GeoSection {
  readonly geo: GeoConfig;
}

/** The geo capability: the {@link Capability} members it has, and its file checks. */
export interface GeoCapability extends Capability<GeoSection> {
  readonly name: 'geo';
  readonly schema: { readonly root: { readonly geo: typeof geoRootSchema } };
  start(host: CapabilityHost): CapabilityRuntime<GeoSection>;
  /**
   * The files the `geo` section refers to that are missing or unusable (`geoFileReferences.ts`),
   * for the composition root's check of file references.
   */
  fileReferenceProblems(config: GeoSection, configFile: string): ConfigProblem[];
}

/** The `geo` key of the configuration root; a configuration without it has no location data. */
export const geoRootSchema = geoSchema
  .default({ sources: [], custom: [], mode: 'strict', implementation: 'auto' })
  .describe('Where client locations come from: a compiled database, location data sources and custom entries.');

/**
 * Client location (src/capabilities/geo/README.md): owns the `geo` section, loads the location
 * database every snapshot answers with (`EnvPart.geo`), and serves `POST /reload/geo`.
 */
export const geoCapability: GeoCapability = {
  name: 'geo',
  schema: { root: { geo: geoRootSchema } },
  start: startGeo,
  fileReferenceProblems: (config, configFile) => geoFileReferenceProblems(config.geo, configFile),
};

/** A database and the configuration (and its `geo` section, serialised) it was loaded for. */
interface LoadedSection {
  readonly config: GeoSection;
  readonly section: string;
  readonly db: LocationDb;
}

/**
 * The geo runtime. The first `prepare` (start-up) loads on the calling thread: nothing is served
 * yet, and a failure must stop the start. Later ones (reloads) reuse the database of the
 * published snapshot when the `geo` section is unchanged and no refresh was asked, else read and
 * build off the event loop (`reloadLocationDb`), so queries keep being answered meanwhile.
 * "Published" is what `commit` was called with: a prepared database whose snapshot was not
 * published (another part refused the configuration) is never reused.
 */
function startGeo(host: CapabilityHost): CapabilityRuntime<GeoSection> {
  let running: LoadedSection | undefined;
  let prepared: LoadedSection | undefined;
  const keep = (config: GeoSection, section: string, db: LocationDb): EnvPart => {
    prepared = { config, section, db };
    return { geo: db };
  };
  return {
    routes: [reloadGeoRoute(host)],
    prepare(config, refresh) {
      const section = JSON.stringify(config.geo);
      // A database prepared for a snapshot that was never published (another part refused the
      // configuration) is used by nothing: free it now.
      if (prepared !== undefined && prepared !== running && prepared.db !== running?.db) prepared.db.release?.();
      if (prepared === undefined) {
        host.log.info({ sources: config.geo.sources.length, compiled: config.geo.compiled ?? null }, 'loading location data');
        const started = performance.now();
        return keep(config, section, reportLoad(loadConfiguredLocationDb(config.geo, host.file), started, host.log));
      }
      if (running !== undefined && running.section === section && !refresh) return keep(config, section, running.db);
      const started = performance.now();
      return reloadLocationDb(config.geo, host.file).then((loaded) => keep(config, section, reportLoad(loaded, started, host.log)));
    },
    commit(config) {
      if (prepared?.config !== config) return;
      const retired = running?.db;
      running = prepared;
      if (retired !== undefined && retired !== running.db) retire(retired);
    },
    describe() {
      return { location: (running ?? prepared)?.db.describe() ?? null };
    },
  };
}

/**
 * Frees a database a reload replaced, after the current turn of the event loop: the query path
 * reads the location data synchronously within a turn, from the snapshot current when the query
 * arrived, so once the new snapshot is published and this turn ends nothing answers from the old
 * one. Released explicitly (`LocationDb.release`: the addon's table ends, the image buffer and the
 * answer-class huge pages are detached and unmapped) because V8 would free them only when it
 * collects, and an idle engine does not (README "Reload"); a forced collection would stall the
 * event loop for hundreds of milliseconds instead.
 */
function retire(db: LocationDb): void {
  // In slices (the image, then each answer-class table): in one turn the release held a location reload 112 ms (issue 17).
  setImmediate(() => (db.releaseSteps ? void runInSlices(db.releaseSteps()) : db.release?.()));
}

/**
 * `POST /reload/geo` (admin token): reloads the configuration and re-reads the location data even
 * when the `geo` section is unchanged (new data files); queries keep the old table until the new
 * one is ready. 200 with the new generation, 422 with the reason the running configuration stays.
 */
function reloadGeoRoute(host: CapabilityHost): AdminRoute {
  return {
    method: 'POST',
    path: '/reload/geo',
    mutating: true,
    async handle() {
      const r = await host.reload('admin API (location data)', ['geo']);
      return r.ok ? { status: 200, json: r } : { status: 422, json: r };
    },
  };
}

/** Logs a location load; the TypeScript fallback is a loud warning (`/healthz` shows it too). */
function reportLoad(loaded: ConfiguredLocationDb, started: number, log: Logger): LocationDb {
  const { db, fallbackReason, skipped, cache } = loaded;
  log.info(
    { ms: Math.round(performance.now() - started), ...db.describe(), ...(cache ? { compiled: cache.file, cache: cache.state } : {}) },
    'location data loaded',
  );
  if (cache?.state === 'rebuilt') {
    log.warn(
      { compiled: cache.file, reason: cache.reason, written: cache.writeError === undefined, writeError: cache.writeError },
      'compiled location file rebuilt from the sources: build it before the start (`gslbd geo build -c CONFIG`, e.g. in ExecStartPre) so a restart loads it in well under a second',
    );
  }
  if (skipped.count > 0) log.warn({ skipped: skipped.count, first: skipped.first }, 'lenient location load skipped bad lines');
  if (db.implementation === 'typescript' && db.describe().sources.length > 0) {
    log.warn(
      { reason: fallbackReason ?? 'geo.implementation is typescript' },
      'location lookups use the TypeScript reference implementation, several times slower than the native addon (npm run build:native)',
    );
  }
  return db;
}
