import { parseConfigText } from '../../src/config/load.js';
import { buildSnapshot, type Snapshot, type SnapshotState } from '../../src/engine/snapshot.js';
import { parseCidr, parseIp } from '../../src/geo/ipAddress.js';
import { qualifiersFromData, type Location } from '../../src/geo/location.js';
import { RangeLocationDb } from '../../src/geo/locationDb.js';
import { LocationTable } from '../../src/geo/locationTable.js';
import { RangeBuilder4, RangeBuilder6 } from '../../src/geo/rangeTable.js';
import type { Client, GslbEndpoint } from '../../src/selection/types.js';
import { allUpHealthView, type HealthView } from '../../src/state/healthView.js';
import { emptyMetricView } from '../../src/state/metricView.js';
import type { ResolveContext } from '../../src/state/resolveContext.js';
import { RotationStore } from '../../src/state/rotationStore.js';

/**
 * Fixtures for unit tests of selection and zones, built in code: a location database from a
 * small CIDR map, snapshots from YAML text, a fixed resolve context with a seeded random source,
 * and a health view that marks chosen endpoints down.
 */

/** One network of a fixture location map; `location` is data in dotted form (`EU.NL.NH.Amsterdam`). */
export interface LocatedNetwork {
  readonly cidr: string;
  readonly location: string;
  readonly lat?: number;
  readonly lon?: number;
}

/**
 * A location database over a CIDR map. Networks may nest (the most specific wins, as in a
 * MaxMind tree); the map is flattened into the ascending tiling the range builders take.
 * @throws Error when a CIDR is invalid.
 */
export function locationDbFrom(networks: readonly LocatedNetwork[]): RangeLocationDb {
  const table = new LocationTable();
  const v4: Flat[] = [];
  const v6: Flat[] = [];
  for (const n of networks) {
    const p = parseCidr(n.cidr);
    const bits = p.address.family === 4 ? 32 : 128;
    const a = p.address;
    const start = p.address.family === 4 ? BigInt(a.w0) : (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n) | (BigInt(a.w2) << 32n) | BigInt(a.w3);
    const size = 1n << BigInt(bits - p.prefix);
    const location: Location =
      n.lat !== undefined && n.lon !== undefined
        ? { qualifiers: qualifiersFromData(n.location.split('.')), lat: n.lat, lon: n.lon }
        : { qualifiers: qualifiersFromData(n.location.split('.')) };
    (bits === 32 ? v4 : v6).push({ start, end: start + size - 1n, prefix: p.prefix, id: table.intern(location) });
  }
  const b4 = new RangeBuilder4();
  for (const r of flatten(v4)) b4.add(Number(r.start), Number(r.end), r.id);
  const b6 = new RangeBuilder6();
  for (const r of flatten(v6)) b6.add(words(r.start), words(r.end), r.id);
  return new RangeLocationDb(table, b4.build(), b6.build(), ['fixture']);
}

interface Flat {
  start: bigint;
  end: bigint;
  prefix: number;
  id: number;
}

/** Non-overlapping ranges, ascending, each piece carrying its most specific network's id. */
function flatten(nets: readonly Flat[]): Flat[] {
  const cuts = [...new Set(nets.flatMap((n) => [n.start, n.end + 1n]))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const out: Flat[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const start = cuts[i]!;
    const end = cuts[i + 1]! - 1n;
    let best: Flat | undefined;
    for (const n of nets) if (n.start <= start && end <= n.end && (!best || n.prefix > best.prefix)) best = n;
    if (best) out.push({ start, end, prefix: best.prefix, id: best.id });
  }
  return out;
}

function words(x: bigint): number[] {
  return [96n, 64n, 32n, 0n].map((s) => Number((x >> s) & 0xffffffffn));
}

/** A deterministic uniform random source in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A resolve context with a seeded random source, a fixed clock (ms) and a fresh rotation store. */
export function fixedContext(seed = 1, nowMs = Date.UTC(2026, 0, 1)): ResolveContext {
  return { random: seededRandom(seed), now: () => nowMs, rotation: new RotationStore() };
}

/** A health view in which the endpoints with these keys (`service/dc/address`) are down. */
export function healthDown(keys: Iterable<string>): HealthView {
  const down = new Set(keys);
  return {
    endpointUp: (e: GslbEndpoint) => !down.has(e.key),
    description: `test: ${down.size} endpoints down`,
  };
}

/**
 * A snapshot built from configuration text, as the engine builds it, over the given state
 * (default: no location data, all up, no metrics).
 * @throws ConfigError when the text is not a valid configuration.
 */
export function snapshotOf(yaml: string, state: Partial<SnapshotState> = {}, nowMs = Date.UTC(2026, 0, 1), previous?: Snapshot): Snapshot {
  const config = parseConfigText(yaml, 'fixture.yaml');
  return buildSnapshot(
    'fixture.yaml',
    config,
    { geo: state.geo ?? locationDbFrom([]), health: state.health ?? allUpHealthView, metrics: state.metrics ?? emptyMetricView },
    nowMs,
    previous,
  );
}

/**
 * The client of a query: `addr/len` is an ECS source prefix, a bare address is the resolver
 * (no ECS), as the front doors build it.
 */
export function clientAt(text: string): Client {
  if (text.includes('/')) {
    const p = parseCidr(text);
    return { address: p.address, sourcePrefix: p.prefix, fromEcs: true };
  }
  const address = parseIp(text);
  return { address, sourcePrefix: address.family === 4 ? 32 : 128, fromEcs: false };
}
