import { allUpHealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { createLogger } from '../../src/core/telemetry/logger.js';
import { Engine } from '../../src/pipeline/engine.js';
import type { Config } from '../../src/process/configSchema.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { prefixLocationDb } from './prefixLocationDb.js';
import { fixedContext } from './selectionFixture.js';

/**
 * The `datacenters:` and `services:` sections (YAML, ending in a newline) of the fast-path tests'
 * deployment: eu (Europe.NL), us (North America.US) and ap (Asia.JP), and the service `web` with
 * one endpoint in each (192.0.2.10, .20, .30). Records follow in the test's own `records:`.
 */
export const THREE_DATA_CENTERS_YAML = `datacenters:
  - { name: eu, location: Europe.NL, lat: 52.4, lon: 4.9 }
  - { name: us, location: North America.US, lat: 39.0, lon: -77.5 }
  - { name: ap, location: Asia.JP, lat: 35.7, lon: 139.7 }
services:
  - name: web
    endpoints:
      - { dc: eu, address: 192.0.2.10 }
      - { dc: us, address: 192.0.2.20 }
      - { dc: ap, address: 192.0.2.30 }
`;

/** The clients' locations: 10.1.0.0/16 in NL, 10.2.0.0/16 in the US, 10.3.0.0/16 and 2001:db8:1::/48 in JP (each near one data center). */
export const THREE_DATA_CENTERS_CLIENTS = prefixLocationDb([
  { cidr: '10.1.0.0/16', location: 'Europe.NL', lat: 52.37, lon: 4.9 },
  { cidr: '10.2.0.0/16', location: 'North America.US', lat: 39.0, lon: -77.5 },
  { cidr: '10.3.0.0/16', location: 'Asia.JP', lat: 35.7, lon: 139.7 },
  { cidr: '2001:db8:1::/48', location: 'Asia.JP', lat: 35.7, lon: 139.7 },
]);

/** A new engine on `config` with those client locations, every endpoint up, no metrics, a fixed context and a silent logger; compiled at 1,700,000,000,000 ms. */
export function threeDataCentersEngine(config: Config): Engine {
  return new Engine(
    buildSnapshot('gslbd.yaml', config, { geo: THREE_DATA_CENTERS_CLIENTS, health: allUpHealthView, metrics: emptyMetricView }, 1_700_000_000_000),
    fixedContext(),
    createLogger('silent'),
  );
}
