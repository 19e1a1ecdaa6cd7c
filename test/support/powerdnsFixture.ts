import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { configSchema } from '../../src/process/configSchema.js';
import { Engine } from '../../src/pipeline/engine.js';
import { type Snapshot } from '../../src/pipeline/snapshot.js';
import { buildSnapshot } from '../../src/process/snapshot.js';
import { parseCidr } from '../../src/core/net/ipAddress.js';
import { qualifiersFromData } from '../../src/core/location/location.js';
import { type LocationDb } from '../../src/core/location/locationDb.js';
import { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { LocationTable } from '../../src/capabilities/geo/locationTable.js';
import { RangeBuilder4, RangeBuilder6 } from '../../src/core/lpm/rangeTable.js';
import { createLogger } from '../../src/core/telemetry/logger.js';
import { allUpHealthView, endpointsDownView, type HealthView } from '../../src/core/views/healthView.js';
import { emptyMetricView } from '../../src/core/views/metricView.js';
import { RotationStore } from '../../src/core/views/rotationStore.js';

/**
 * The zones, data centers and GSLB records behind the PowerDNS front door tests
 * (`test/fixtures/powerdns/zones.yaml`, without listeners) as a plain object, for tests that
 * add listeners and write a configuration file.
 */
export function zonesConfig(): Record<string, unknown> {
  return parse(readFileSync(readableFixture(), 'utf8')) as Record<string, unknown>;
}

/** The fixture file, found from `test/support/` (tsx) or `dist/test/support/` (compiled). */
function readableFixture(): URL {
  for (const rel of ['../fixtures/powerdns/zones.yaml', '../../../test/fixtures/powerdns/zones.yaml']) {
    const url = new URL(rel, import.meta.url);
    try {
      readFileSync(url);
      return url;
    } catch {
      // try the other layout
    }
  }
  throw new Error('test/fixtures/powerdns/zones.yaml not found');
}

/** One network of the test location data. */
interface TestNetwork {
  readonly cidr: string;
  readonly fields: readonly string[];
  readonly lat: number;
  readonly lon: number;
}

/** The networks of {@link testLocationDb}; every other address is unknown. */
export const TEST_NETWORKS: readonly TestNetwork[] = [
  { cidr: '8.8.8.0/24', fields: ['NA', 'US'], lat: 37.75, lon: -97.82 },
  { cidr: '193.0.0.0/20', fields: ['EU', 'NL'], lat: 52.37, lon: 4.89 },
  { cidr: '202.12.26.0/23', fields: ['AS', 'JP'], lat: 35.69, lon: 139.69 },
  { cidr: '2001:67c:2e8::/48', fields: ['EU', 'NL'], lat: 52.37, lon: 4.89 },
];

/**
 * A small location database in the TypeScript range tables: the networks of
 * {@link TEST_NETWORKS}. Scopes follow from the tables' merging: 8.8.8.0/24 → 24,
 * 193.0.0.0/20 → 20, 202.12.26.0/23 → 23, 2001:67c:2e8::/48 → 48.
 */
export function testLocationDb(): LocationDb {
  const table = new LocationTable();
  const v4 = new RangeBuilder4();
  const v6 = new RangeBuilder6();
  for (const n of TEST_NETWORKS) {
    const id = table.intern({ qualifiers: qualifiersFromData(n.fields), lat: n.lat, lon: n.lon });
    const p = parseCidr(n.cidr);
    const a = p.address;
    if (a.family === 4) {
      const size = 2 ** (32 - p.prefix);
      v4.add(a.w0, a.w0 + size - 1, id);
    } else {
      const words = [a.w0, a.w1, a.w2, a.w3];
      const end = words.map((w, i) => {
        const keep = Math.max(0, Math.min(32, p.prefix - i * 32));
        return keep >= 32 ? w : (w | (keep === 0 ? 0xffffffff : 0xffffffff >>> keep)) >>> 0;
      });
      v6.add(words, end, id);
    }
  }
  return new RangeLocationDb(table, v4.build(), v6.build(), ['test networks']);
}

/** A health view with the endpoints whose keys are listed down (keys: `service/dc/address`). */
export function healthWithDown(...down: string[]): HealthView {
  return endpointsDownView(down, `test: ${down.length} down`);
}

/** A snapshot of the fixture (or of `config`) over the test location data and `health`. */
export function fixtureSnapshot(health: HealthView = allUpHealthView, config: Record<string, unknown> = zonesConfig()): Snapshot {
  const parsed = configSchema.parse(config);
  return buildSnapshot('zones.yaml', parsed, { geo: testLocationDb(), health, metrics: emptyMetricView }, Date.parse('2024-01-01T00:00:00Z'));
}

/** An engine on the fixture snapshot, with a fixed clock (`clock.ms`, advance it by hand) and no log output. */
export function fixtureEngine(health: HealthView = allUpHealthView): { engine: Engine; clock: { ms: number } } {
  const clock = { ms: Date.parse('2024-01-01T00:00:00Z') };
  const ctx = { random: () => 0.5, now: () => clock.ms, rotation: new RotationStore() };
  return { engine: new Engine(fixtureSnapshot(health), ctx, createLogger('silent')), clock };
}

/**
 * A remote backend reply that was given at once (a plain value): every reply is, except a lookup
 * whose selection delegates to a sub-tier (recursive delegation), which none of the fixture's records does.
 * @throws Error when the reply is a promise.
 */
export function atOnce<R>(reply: R | Promise<R>): R {
  if (reply instanceof Promise) throw new Error('the remote backend answered asynchronously');
  return reply;
}
