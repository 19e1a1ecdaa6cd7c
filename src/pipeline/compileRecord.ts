import type { GslbRecordConfig } from './config/recordSchema.js';
import type { ServiceConfig } from './config/topologySchema.js';
import { endpointAnswers } from './config/crossReferences.js';
import { parseRecordData } from '../core/dns/presentation.js';
import type { GslbRecordType, RecordData } from '../core/dns/records.js';
import { conditionInputs } from '../capabilities/policies/condition.js';
import type { DecisionShape } from './locationDecision.js';
import { policyStagesFor, type PolicyContext } from '../capabilities/policies/recordPolicies.js';
import { DecisionCache } from './decisionCache.js';
import { locationClassesFor } from './answerClasses.js';
import { buildPipeline } from './pipeline.js';
import { compileRecordHealth } from '../capabilities/health/recordHealth.js';
import type { CompiledGslbRecord, DcCandidate } from './stage.js';
import type { CompiledDataCenter, GslbEndpoint } from '../core/topology.js';
import type { EndpointConfig } from './config/topologySchema.js';

/**
 * Compiles a validated GSLB record: its candidates (data centers in configuration order with the
 * enabled endpoints that can answer its type), the record data each endpoint contributes, the
 * pipeline its policy needs (with its DNS policies or static rules when `policies` is given), its
 * health behaviour (tiers; `site` is the engine's own site for local-first records), and its
 * decision cache (`decisionCache.ts`: whether its decisions may be reused is decided here;
 * `reuseDecisions` false turns it off, for a reference that always runs the pipeline).
 */
export function compileRecord(
  rec: GslbRecordConfig,
  service: ServiceConfig,
  dcs: ReadonlyMap<string, CompiledDataCenter>,
  policies?: PolicyContext,
  site?: string,
  reuseDecisions = true,
): CompiledGslbRecord {
  const byDc = new Map<string, GslbEndpoint[]>();
  for (const ep of service.endpoints) {
    if (!ep.enabled || !endpointAnswers(ep, rec.type)) continue;
    const dc = dcs.get(ep.dc)!;
    const list = byDc.get(dc.name) ?? [];
    list.push({
      key: endpointKey(service.name, ep),
      dc,
      data: endpointData(rec.type, ep),
      weight: ep.weight,
      priority: ep.priority,
      lat: ep.lat ?? dc.lat,
      lon: ep.lon ?? dc.lon,
    });
    byDc.set(dc.name, list);
  }
  const rotationPrefix = `${rec.name}/${rec.type}`;
  const candidates: DcCandidate[] = [...dcs.values()]
    .filter((dc) => byDc.has(dc.name))
    .map((dc) => ({ dc, endpoints: byDc.get(dc.name)!, rotationKey: `${rotationPrefix}/${dc.name}` }));
  const own = policies ? policyStagesFor(rec, policies) : { stages: [], inputs: conditionInputs(), lists: [] };
  const p = rec.policy;
  const decision: DecisionShape = {
    candidates: candidates.map((c) => c.dc),
    lists: own.lists,
    otherwise:
      p.type === 'static-proximity'
        ? { kind: 'static-proximity', defaults: new Set(p.default) }
        : p.type === 'static'
          ? { kind: 'every-available' }
          : { kind: 'client-independent' },
  };
  const reads = { patterns: own.inputs.locations, proximityDcs: p.type === 'static-proximity' ? candidates.map((c) => c.dc) : undefined, decision };
  const pipeline = buildPipeline(rec.policy, rotationPrefix, own.stages, service.name);
  const locationClasses = policies?.geo ? locationClassesFor(policies.geo, reads) : undefined;
  const decisions = DecisionCache.forRecord({
    name: rec.name,
    pipeline,
    readsLocation: reads.patterns.length > 0 || reads.proximityDcs !== undefined,
    locationClasses,
    subnets: own.inputs.subnets,
    readsQname: own.inputs.readsQname,
    turnedOff: !reuseDecisions,
  });
  return {
    name: rec.name,
    type: rec.type,
    ttl: rec.ttl,
    service: service.name,
    candidates,
    pipeline,
    locationClasses,
    decisions,
    failsafe: rec.failsafe.map((t) => parseRecordData(rec.type, t)),
    failsafeTtl: rec.failsafeTtl ?? rec.ttl,
    health: compileRecordHealth(rec.health, rec.failsafe.length > 0, candidates, service.name, site),
  };
}

/** The stable key of an endpoint: `service/dc/address` or `service/dc/target[:port]`. */
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
