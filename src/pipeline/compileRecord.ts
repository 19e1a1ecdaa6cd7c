import { parseRecordData } from '../core/dns/presentation.js';
import { canonicalIpText } from '../core/net/ipAddress.js';
import type { GslbRecordType, RecordData } from '../core/dns/records.js';
import type { SubnetConfig } from '../core/net/subnet.js';
import type { LocationDb } from '../core/location/locationDb.js';
import type { CompiledDataCenter, GslbEndpoint } from '../core/model/topology.js';
import { locationClassesSteps } from './selection/answerClasses.js';
import type { BalanceAlgorithm } from './selection/balanceAlgorithm.js';
import type { Capability } from './capability.js';
import { endpointAnswers } from './crossReferences.js';
import type { GslbRecordConfig } from './config/recordSchema.js';
import type { EndpointConfig, ServiceConfig } from './config/topologySchema.js';
import { DecisionCache } from './selection/decisionCache.js';
import { assemblePipeline } from './selection/pipeline.js';
import { runSteps, type Steps } from './selection/steps.js';
import type { ClientInputs, CompiledGslbRecord, DcCandidate, LocationReader } from './selection/stage.js';

/** What compiling the records of one snapshot shares. */
export interface RecordCompilation<C> {
  /** The whole validated configuration (capabilities read their global sections from it). */
  readonly config: C;
  readonly capabilities: readonly Capability<C>[];
  /** Balance algorithms by name, from the capabilities. */
  readonly algorithms: ReadonlyMap<string, BalanceAlgorithm>;
  readonly dataCenters: readonly CompiledDataCenter[];
  readonly dcByName: ReadonlyMap<string, CompiledDataCenter>;
  /** The location data the snapshot answers with (answer classes are built over it). */
  readonly geo: LocationDb | undefined;
  /** False compiles without decision caches (a reference that always runs the pipeline). */
  readonly reuseDecisions: boolean;
  /**
   * The endpoints already compiled in this compilation, by configured endpoint and record type:
   * records of one service share them (20,000 records over 200 services made 60,000 endpoint
   * objects and their key strings, where 600 say the same). Absent: each record compiles its own.
   */
  readonly endpoints?: Map<EndpointConfig, Map<GslbRecordType, GslbEndpoint>>;
}

/**
 * Compiles a validated GSLB record: its candidates (data centers in configuration order with the
 * enabled endpoints that can answer its type), the record data each endpoint contributes, its
 * pipeline — the query path's own stages (candidates, pick, balance) and every stage the
 * capabilities contribute for it (`Capability.stages`) —, its answer classes when a stage reads
 * the location, and its decision cache (`decisionCache.ts`: whether its decisions may be reused is
 * decided here from what the stages registered).
 * @throws Error when the record's balance algorithm is unknown (the schema prevents it).
 */
export function compileRecord<C>(rec: GslbRecordConfig, service: ServiceConfig, comp: RecordCompilation<C>): CompiledGslbRecord {
  return runSteps(compileRecordSteps(rec, service, comp));
}

/** {@link compileRecord} as steps: the answer-class tables, when built, are built in slices (`selection/steps.ts`). */
export function* compileRecordSteps<C>(rec: GslbRecordConfig, service: ServiceConfig, comp: RecordCompilation<C>): Steps<CompiledGslbRecord> {
  const byDc = new Map<string, GslbEndpoint[]>();
  for (const ep of service.endpoints) {
    if (!ep.enabled || !endpointAnswers(ep, rec.type)) continue;
    const dc = comp.dcByName.get(ep.dc)!;
    const list = byDc.get(dc.name) ?? [];
    list.push(compiledEndpoint(service.name, ep, dc, rec.type, comp.endpoints));
    byDc.set(dc.name, list);
  }
  const rotationKeyPrefix = `${rec.name}/${rec.type}`;
  const candidates: DcCandidate[] = comp.dataCenters.filter((dc) => byDc.has(dc.name)).map((dc) => new Candidate(dc, byDc.get(dc.name)!, rotationKeyPrefix));
  const readers: LocationReader[] = [];
  const subnets: SubnetConfig[] = [];
  let readsQname = false;
  const inputs: ClientInputs = {
    location: (reader) => readers.push(reader) - 1,
    subnets: (list) => subnets.push(...list) - list.length,
    qname: () => {
      readsQname = true;
    },
  };
  const input = {
    record: rec as never,
    config: comp.config,
    candidates,
    dataCenters: comp.dataCenters,
    dcByName: comp.dcByName,
    rotationKeyPrefix,
    geo: comp.geo,
    inputs,
  };
  const contributed = comp.capabilities.flatMap((c) => c.stages?.(input) ?? []);
  const algorithm = comp.algorithms.get(rec.policy.balanceAlgorithm);
  if (!algorithm) throw new Error(`unknown balance algorithm "${rec.policy.balanceAlgorithm}"`);
  const pipeline = assemblePipeline(contributed, algorithm, rec.policy.pickDcCount, rec.dcWeights);
  const locationClasses = comp.geo
    ? yield* locationClassesSteps(
        comp.geo,
        readers,
        candidates.map((c) => c.dc),
      )
    : undefined;
  const decisions = DecisionCache.forRecord({
    name: rec.name,
    pipeline,
    readsLocation: readers.length > 0,
    locationClasses,
    subnets,
    readsQname,
    turnedOff: !comp.reuseDecisions,
  });
  return {
    name: rec.name,
    type: rec.type,
    ttl: rec.ttl,
    service: service.name,
    candidates,
    // A field of the record, not an entry of a module-wide WeakMap: V8 marks WeakMap entries as
    // ephemerons in the atomic pause of a full collection, and one per record of two snapshots
    // made most of that pause during a 20,000-record reload (issue 17; docs/BENCHMARKS.md, reload).
    allLive: Object.freeze(candidates.map((candidate) => ({ candidate, endpoints: candidate.endpoints }))),
    pipeline,
    locationClasses,
    decisions,
    // Addresses in canonical text, as endpoints have them, so two spellings are one record.
    failsafe: distinctData(rec.failsafe.map((t) => parseRecordData(rec.type, rec.type === 'A' || rec.type === 'AAAA' ? canonicalIpText(t) : t))),
    failsafeTtl: rec.failsafeTtl ?? rec.ttl,
  };
}

/** The stable key of an endpoint: `service/dc/address` or `service/dc/target[:port]`. */
/**
 * A data center that can answer a record, whose rotation key is built on first use: most records
 * never rotate (one endpoint per data center), and the key, a string per candidate, was one of a
 * reload's largest groups of objects (issue 17).
 */
class Candidate implements DcCandidate {
  private key: string | undefined;
  constructor(
    readonly dc: CompiledDataCenter,
    readonly endpoints: readonly GslbEndpoint[],
    private readonly rotationKeyPrefix: string,
  ) {}

  get rotationKey(): string {
    return (this.key ??= `${this.rotationKeyPrefix}/${this.dc.name}`);
  }
}

/** The compiled endpoint of `ep` for records of `type`, shared through `cache` when given. */
function compiledEndpoint(
  service: string,
  ep: EndpointConfig,
  dc: CompiledDataCenter,
  type: GslbRecordType,
  cache: Map<EndpointConfig, Map<GslbRecordType, GslbEndpoint>> | undefined,
): GslbEndpoint {
  let byType = cache?.get(ep);
  const known = byType?.get(type);
  if (known) return known;
  const compiled: GslbEndpoint = {
    key: endpointKey(service, ep),
    dc,
    data: endpointData(type, ep),
    weight: ep.weight,
    priority: ep.priority,
    lat: ep.lat ?? dc.lat,
    lon: ep.lon ?? dc.lon,
  };
  if (cache) {
    if (!byType) cache.set(ep, (byType = new Map()));
    byType.set(type, compiled);
  }
  return compiled;
}

export function endpointKey(service: string, ep: Pick<EndpointConfig, 'dc' | 'address' | 'target' | 'port'>): string {
  const where = ep.address ?? `${ep.target}${ep.port !== undefined ? `:${ep.port}` : ''}`;
  return `${service}/${ep.dc}/${where}`;
}

/** The record data an endpoint contributes to a record of `type`. */
function endpointData(type: GslbRecordType, ep: EndpointConfig): RecordData {
  switch (type) {
    case 'A':
    case 'AAAA':
      return ep.address!;
    case 'CNAME':
      return ep.target!;
    case 'MX':
      return { preference: ep.priority, exchange: ep.target! };
    case 'SRV':
      return { priority: ep.priority, weight: ep.weight, port: ep.port!, target: ep.target! };
  }
}

/** `data` without repeats, first occurrence kept: a fail-safe list given twice answers each record once (RFC 2181 §5). */
function distinctData(data: RecordData[]): RecordData[] {
  const seen = new Set<string>();
  return data.filter((d) => {
    const text = typeof d === 'string' ? d : JSON.stringify(d);
    if (seen.has(text)) return false;
    seen.add(text);
    return true;
  });
}
