import { configuredName, isInZone, ownerInZone } from '../core/dns/name.js';
import type { RecordType, ResourceRecord, SoaData } from '../core/dns/records.js';
import type { SubnetConfig } from '../core/net/subnet.js';
import { clientSplitOf } from './zones/clientSplit.js';
import { WILDCARD, type Qualifiers } from '../core/location/location.js';
import type { LocationDb } from '../core/location/locationDb.js';
import type { Capability } from './capability.js';
import { compileRecordSteps } from './compileRecord.js';
import type { GslbRecordConfig } from './config/recordSchema.js';
import type { DataCenterConfig, ServiceConfig } from './config/topologySchema.js';
import type { ZoneConfig } from './config/zoneSchema.js';
import type { CompiledGslbRecord, SelectionEnv } from './selection/stage.js';
import { runSteps, type Steps } from './selection/steps.js';
import type { CompiledDataCenter } from '../core/model/topology.js';
import type { HealthView } from '../core/views/healthView.js';
import type { MetricView } from '../core/views/metricView.js';
import type { ProbeDemand } from '../core/views/probeDemand.js';
import type { ProximityView } from '../core/views/proximityView.js';
import type { AnswerSource } from './zones/authoritative.js';
import { contentHash, nextSerial, type ZoneSerial } from './zones/soaSerial.js';
import { buildZoneSteps, ZoneIndex, type ZoneData } from './zones/zoneIndex.js';

/**
 * Everything one query needs, immutable: compiled configuration, zones, GSLB records, and the
 * state views (location, health, metrics). A reload or a state change publishes a new snapshot;
 * queries in flight keep the one they started with.
 */
export interface Snapshot extends AnswerSource {
  /** Increments with every published snapshot. */
  readonly generation: number;
  /** When the configuration of this snapshot was loaded (ms since the epoch). */
  readonly loadedAtMs: number;
  readonly file: string;
  /** The query path's sections of the configuration the snapshot was compiled from. */
  readonly config: PipelineConfig;
  readonly records: readonly CompiledGslbRecord[];
  readonly dataCenters: readonly CompiledDataCenter[];
  readonly env: Omit<SelectionEnv, 'ctx'>;
  /** SOA serial per zone, carried from one snapshot to the next (see soaSerial.ts). */
  readonly serials: ReadonlyMap<string, ZoneSerial>;
}

/** The sections of the configuration the query path compiles (capabilities read theirs). */
export interface PipelineConfig {
  readonly zones: readonly ZoneConfig[];
  readonly datacenters: readonly DataCenterConfig[];
  readonly services: readonly ServiceConfig[];
  readonly records: readonly GslbRecordConfig[];
}

/** State views a snapshot is built over. */
export interface SnapshotState {
  readonly geo: LocationDb;
  readonly health: HealthView;
  readonly metrics: MetricView;
  /** The probe-request queue's demand sink, when agents are configured. */
  readonly probes?: ProbeDemand;
  /** The network-proximity view (proximity database, ordered zone index cache), when that capability is configured. */
  readonly proximity?: ProximityView;
}

/** What a snapshot is compiled from. */
export interface SnapshotInput<C extends PipelineConfig> {
  /** The configuration file (shown by /status; relative paths in it are relative to its directory). */
  readonly file: string;
  readonly config: C;
  /** The capabilities whose stages and balance algorithms the records use. */
  readonly capabilities: readonly Capability<C>[];
  readonly state: SnapshotState;
  /** When the configuration was loaded (ms since the epoch; the SOA serial rule reads it). */
  readonly nowMs: number;
  /** The running snapshot on a reload: SOA serials and the generation carry forward. */
  readonly previous?: Snapshot | undefined;
  /**
   * False compiles every record without a decision cache (`decisionCache.ts`): each query runs
   * the whole pipeline, the reference a cached decision must equal. Default true.
   */
  readonly reuseDecisions?: boolean;
  /**
   * Each zone's content hash ({@link zoneContentHashes}), when computed elsewhere (the reload
   * pipeline hashes on its worker thread); computed here otherwise.
   */
  readonly contentHashes?: ReadonlyMap<string, string>;
}

/** Compiles a validated configuration into a snapshot, in one go (start-up, tests, tools). */
export function compileSnapshot<C extends PipelineConfig>(input: SnapshotInput<C>): Snapshot {
  return runSteps(compileSnapshotSteps(input));
}

/** The number of units of work (records, owner names) between two yields of {@link compileSnapshotSteps} while zones are built. */
const ZONE_STEP = 256;

/**
 * {@link compileSnapshot} as a generator that yields between units of work of well under a
 * millisecond each (one GSLB record compiled, a few thousand locations of an answer-class table, {@link ZONE_STEP} zone entries placed), so a caller
 * can compile a large configuration in slices without holding the event loop (the reload
 * pipeline, `src/process/reloadPipeline.ts`); the snapshot is the generator's return value.
 * Nothing is published or shared until it returns.
 */
export function* compileSnapshotSteps<C extends PipelineConfig>(input: SnapshotInput<C>): Steps<Snapshot> {
  const { file, config, state, nowMs, previous } = input;
  const dataCenters: CompiledDataCenter[] = config.datacenters.map((dc, index) => ({
    index,
    name: dc.name,
    qualifiers: dc.location ?? ([WILDCARD, WILDCARD, WILDCARD, WILDCARD, WILDCARD, WILDCARD] as Qualifiers),
    lat: dc.lat,
    lon: dc.lon,
    site: dc.site ?? dc.name,
  }));
  const dcByName = new Map(dataCenters.map((d) => [d.name, d]));
  const services = new Map(config.services.map((s) => [s.name, s]));
  const algorithms = new Map(input.capabilities.flatMap((c) => c.balanceAlgorithms ?? []).map((a) => [a.name, a]));
  const compilation = {
    config,
    capabilities: input.capabilities,
    algorithms,
    dataCenters,
    dcByName,
    geo: state.geo,
    reuseDecisions: input.reuseDecisions ?? true,
    endpoints: new Map(),
  };
  const records: CompiledGslbRecord[] = [];
  for (const r of config.records) {
    records.push(yield* compileRecordSteps(r, services.get(r.service)!, compilation));
    yield;
  }

  // Placing 20,000 records in their zones in one step held the event loop about 80 ms (issue 17):
  // every pass over the records yields each ZONE_STEP records.
  const ownZone = yield* recordZoneSteps(config);
  const hashes = input.contentHashes ?? zoneContentHashes(config);
  const serials = new Map<string, ZoneSerial>();
  const zones: ZoneData[] = [];
  for (const z of config.zones) {
    const hash = hashes.get(z.name)!;
    const serial = nextSerial(z.soa.serial, hash, previous?.serials.get(z.name), nowMs);
    serials.set(z.name, { serial, contentHash: hash });
    const { mname, rname, refresh, retry, expire, minimum } = z.soa;
    const soaData: SoaData = { mname, rname, serial, refresh, retry, expire, minimum };
    const soa = { name: z.name, type: 'SOA' as const, ttl: z.soa.ttl ?? z.ttl, data: soaData };
    const rrs: ResourceRecord[] = z.ns.map((ns) => ({ name: z.name, type: 'NS', ttl: z.ttl, data: ns }));
    const restricted = new Map<string, Map<RecordType, readonly SubnetConfig[]>>();
    const restrict = (owner: string, type: RecordType, clients: readonly SubnetConfig[] | undefined): void => {
      if (!clients) return;
      let types = restricted.get(owner);
      if (!types) restricted.set(owner, (types = new Map()));
      types.set(type, clients);
    };
    let n = 0;
    for (const r of z.records) {
      const owner = r.name === '@' ? z.name : ownerInZone(configuredName(r.name), z.name);
      rrs.push({ name: owner, type: r.type, ttl: r.ttl ?? z.ttl, data: r.data });
      restrict(owner, r.type, r.clients);
      if (++n % ZONE_STEP === 0) yield;
    }
    const own: CompiledGslbRecord[] = [];
    for (let i = 0; i < records.length; i++) {
      if (ownZone[i] === z.name) {
        own.push(records[i]!);
        restrict(config.records[i]!.name, config.records[i]!.type, config.records[i]!.clients);
      }
      if (++n % ZONE_STEP === 0) yield;
    }
    const splits = new Map([...restricted].map(([owner, types]) => [owner, clientSplitOf(types)]));
    yield;
    zones.push(yield* buildZoneSteps(z.name, soa, rrs, own, ZONE_STEP, splits));
  }

  return {
    generation: (previous?.generation ?? 0) + 1,
    loadedAtMs: nowMs,
    file,
    config,
    zones: yield* ZoneIndex.build(zones, ZONE_STEP),
    records,
    dataCenters,
    env: {
      geo: state.geo,
      health: state.health,
      metrics: state.metrics,
      ...(state.probes ? { probes: state.probes } : {}),
      ...(state.proximity ? { proximity: state.proximity } : {}),
    },
    serials,
  };
}

/** The zone each GSLB record of `config` belongs to (the most specific zone holding its name), by record index. */
function recordZones(config: PipelineConfig): (string | undefined)[] {
  return runSteps(recordZoneSteps(config));
}

/** {@link recordZones} as steps of {@link ZONE_STEP} records. */
function* recordZoneSteps(config: PipelineConfig): Steps<(string | undefined)[]> {
  const zoneNames = config.zones.map((z) => z.name).sort((a, b) => b.length - a.length);
  const out: (string | undefined)[] = [];
  for (const r of config.records) {
    out.push(zoneNames.find((z) => isInZone(r.name, z)));
    if (out.length % ZONE_STEP === 0) yield;
  }
  return out;
}

/**
 * Each zone's content hash, the input of the `auto` SOA serial rule (`zones/soaSerial.ts`): what
 * the zone can answer — its own data, its GSLB records, and the services and data centers those
 * records answer from (an endpoint change changes answers). Depends on the configuration only,
 * so it can be computed on another thread.
 */
export function zoneContentHashes(config: PipelineConfig): Map<string, string> {
  const ownZone = recordZones(config);
  const hashes = new Map<string, string>();
  for (const z of config.zones) {
    const gslbConfigs = config.records.filter((_, i) => ownZone[i] === z.name);
    const usedNames = new Set(gslbConfigs.map((r) => r.service));
    const usedServices = config.services.filter((svc) => usedNames.has(svc.name));
    const usedDcNames = new Set(usedServices.flatMap((svc) => svc.endpoints.map((e) => e.dc)));
    const usedDcs = config.datacenters.filter((dc) => usedDcNames.has(dc.name));
    hashes.set(z.name, contentHash([z, gslbConfigs, usedServices, usedDcs]));
  }
  return hashes;
}

/**
 * The same snapshot over new state views (a capability published a change: health, location
 * data): configuration, zones and serials are shared; the generation advances.
 */
export function withEnv(s: Snapshot, part: Partial<SnapshotState>): Snapshot {
  return { ...s, generation: s.generation + 1, env: { ...s.env, ...part } };
}

/**
 * The same snapshot over a new health view (a health change, src/capabilities/health/): configuration, zones
 * and serials are shared; the generation advances.
 */
export function withHealthView(s: Snapshot, health: HealthView): Snapshot {
  return { ...s, generation: s.generation + 1, env: { ...s.env, health } };
}
