import { isIP } from 'node:net';
import type { z } from 'zod';
import { configuredName, isInZone, ownerInZone } from '../core/dns/name.js';
import { parseRecordData } from '../core/dns/presentation.js';
import type { GslbRecordType } from '../core/dns/records.js';
import { subnetsOverlap, type SubnetConfig } from '../core/net/subnet.js';
import type { Capability, PolicyReferences } from './capability.js';
import type { GslbRecordConfig } from './config/recordSchema.js';

/** A capability's check of the references of a record's policy. */
export type PolicyCheck = NonNullable<Capability['checkPolicy']>;
import type { DataCenterConfig, EndpointConfig, ServiceConfig } from './config/topologySchema.js';
import type { ZoneConfig } from './config/zoneSchema.js';

interface CrossReferenced {
  zones: ZoneConfig[];
  datacenters: DataCenterConfig[];
  services: ServiceConfig[];
  records: GslbRecordConfig[];
}

/**
 * Checks what one field cannot check alone: names refer to things that exist, names are unique
 * (data center names also when compared without case), an endpoint is listed once per service,
 * GSLB records lie in a zone and their service can answer their type, a CNAME stands alone at
 * its name (RFC 1034 §3.6.2, RFC 2181 §10.1). Every issue carries the path of the offending field.
 */
export function checkCrossReferences(cfg: CrossReferenced, ctx: z.RefinementCtx, policyChecks: readonly PolicyCheck[] = []): void {
  // `first`: where a duplicate was defined first (`params.firstPath`: the loader names both places).
  const issue = (path: (string | number)[], message: string, first?: (string | number)[]): void => {
    ctx.addIssue({ code: 'custom', path, message, ...(first ? { params: { firstPath: first } } : {}) });
  };

  const zoneNames = new Map<string, number>();
  cfg.zones.forEach((zone, zi) => {
    const firstZone = zoneNames.get(zone.name);
    if (firstZone !== undefined) issue(['zones', zi, 'name'], `zone "${zone.name}" is defined twice`, ['zones', firstZone, 'name']);
    else zoneNames.set(zone.name, zi);
    zone.records.forEach((r, ri) => {
      const owner = relativeOwner(r.name);
      if (owner !== '@' && zone.name !== '' && isInZone(owner, zone.name)) {
        issue(
          ['zones', zi, 'records', ri, 'name'],
          `owner names in a zone are relative: write "${owner.slice(0, -zone.name.length - 1) || '@'}", not "${r.name}"`,
        );
      }
    });
  });

  const dcIndex = new Map<string, number>();
  /** Lower-cased name → index of the first data center spelt that way in any case. */
  const dcByLowerName = new Map<string, number>();
  cfg.datacenters.forEach((dc, i) => {
    const firstDc = dcIndex.get(dc.name);
    if (firstDc !== undefined) issue(['datacenters', i, 'name'], `data center "${dc.name}" is defined twice`, ['datacenters', firstDc, 'name']);
    else {
      const first = dcByLowerName.get(dc.name.toLowerCase());
      if (first !== undefined) {
        const other = cfg.datacenters[first]!.name;
        issue(
          ['datacenters', i, 'name'],
          `data center "${dc.name}" differs only in case from "${other}" (datacenters[${first}].name): names are compared exactly, so one is a typo`,
        );
      }
      dcIndex.set(dc.name, i);
    }
    if (!dcByLowerName.has(dc.name.toLowerCase())) dcByLowerName.set(dc.name.toLowerCase(), i);
  });
  const dcNames: ReadonlySet<string> = new Set(dcIndex.keys());

  const services = new Map<string, ServiceConfig>();
  const serviceIndex = new Map<string, number>();
  cfg.services.forEach((svc, si) => {
    const firstService = serviceIndex.get(svc.name);
    if (firstService !== undefined) issue(['services', si, 'name'], `service "${svc.name}" is defined twice`, ['services', firstService, 'name']);
    else serviceIndex.set(svc.name, si);
    services.set(svc.name, svc);
    /** Endpoint identity (data center, address or target, port) → its first index. */
    const seen = new Map<string, number>();
    svc.endpoints.forEach((ep, ei) => {
      if (!dcNames.has(ep.dc)) issue(['services', si, 'endpoints', ei, 'dc'], `unknown data center "${ep.dc}"`);
      const key = JSON.stringify([ep.dc, ep.address ?? null, ep.target ?? null, ep.port ?? null]);
      const first = seen.get(key);
      if (first === undefined) seen.set(key, ei);
      else {
        issue(
          ['services', si, 'endpoints', ei],
          `the same endpoint as services[${si}].endpoints[${first}] (data center "${ep.dc}", ${ep.address ?? ep.target}): it would be answered twice in one RRset (RFC 2181 §5) and count twice in the weights`,
        );
      }
    });
  });

  // Owner names with their types and the clients each answers, static and GSLB, to enforce CNAME
  // exclusivity (per answer when `clients` splits a name) and uniqueness.
  const typesAt = new Map<string, Map<string, Claim>>();
  const claim = (name: string, type: string, path: (string | number)[], clients?: readonly SubnetConfig[]): void => {
    let types = typesAt.get(name);
    if (!types) typesAt.set(name, (types = new Map()));
    const same = types.get(type);
    if (same && type !== 'CNAME' && !sameClients(same.clients, clients)) {
      issue(path, `every ${type} record of "${name}" must name the same clients: one RRset answers one set of clients`, same.path);
    }
    if (type === 'CNAME' && same) issue(path, `"${name}" has more than one CNAME`);
    else {
      for (const [t, other] of types) {
        if ((t === 'CNAME') === (type === 'CNAME')) continue;
        const addressType = type === 'CNAME' ? t : type;
        const unsplit = clients === undefined && other.clients === undefined;
        if (unsplit || !SPLIT_TYPES.has(addressType)) {
          issue(
            path,
            type === 'CNAME'
              ? `a CNAME cannot share the name "${name}" with other records`
              : `"${name}" already has a CNAME; no other record may share its name`,
          );
          break;
        }
        const both = overlap(clients, other.clients);
        if (both) {
          issue(
            path,
            `clients in ${both} would get both the CNAME and the ${addressType} records of "${name}": the clients of a CNAME and of the addresses at one name must not overlap`,
            other.path,
          );
          break;
        }
      }
    }
    if (!same) types.set(type, { path, clients, clientsPath: path[0] === 'records' ? [path[0], path[1]!, 'clients'] : [...path, 'clients'] });
  };
  cfg.zones.forEach((zone, zi) => {
    claim(zone.name, 'SOA', ['zones', zi, 'soa']);
    claim(zone.name, 'NS', ['zones', zi, 'ns']);
  });
  cfg.zones.forEach((zone, zi) =>
    zone.records.forEach((r, ri) => claim(ownerInZone(relativeOwner(r.name), zone.name), r.type, ['zones', zi, 'records', ri], r.clients)),
  );

  const refs: PolicyReferences = { dataCenters: dcNames, services: new Set(services.keys()) };
  cfg.records.forEach((rec, i) => {
    const path = ['records', i];
    if (!cfg.zones.some((z) => isInZone(rec.name, z.name))) issue([...path, 'name'], `"${rec.name}" is not inside any configured zone`);
    const firstRecord = typesAt.get(rec.name)?.get(rec.type);
    if (firstRecord && rec.type !== 'CNAME') issue([...path, 'name'], `"${rec.name}" ${rec.type} is defined twice`, firstRecord.path);
    claim(rec.name, rec.type, [...path, 'type'], rec.clients);
    for (const dc of Object.keys(rec.dcWeights ?? {})) {
      if (!dcNames.has(dc)) issue([...path, 'dcWeights', dc], `unknown data center "${dc}"`);
    }
    const svc = services.get(rec.service);
    if (!svc) {
      issue([...path, 'service'], `unknown service "${rec.service}"`);
    } else if (!svc.endpoints.some((e) => endpointAnswers(e, rec.type))) {
      issue([...path, 'service'], `service "${rec.service}" has no endpoint that can answer ${rec.type}`);
    }
    for (const check of policyChecks) check(rec.policy, refs, (at, message) => issue([...path, 'policy', ...at], message));
    rec.failsafe.forEach((text, fi) => {
      try {
        parseRecordData(rec.type, text);
      } catch (e) {
        issue([...path, 'failsafe', fi], `not valid ${rec.type} data: ${(e as Error).message}`);
      }
    });
  });

  for (const [name, types] of typesAt) {
    const split = types.has('CNAME') && [...types.keys()].some((t) => SPLIT_TYPES.has(t));
    for (const [type, c] of types) {
      if (c.clients === undefined) continue;
      if (!split || !(type === 'CNAME' || SPLIT_TYPES.has(type))) {
        issue(c.clientsPath, `\`clients\` applies only at a name that holds a CNAME and address records (A, AAAA); "${name}" ${type} answers every client`);
      }
    }
  }
}

/** One owner name's records of one type: where the first is configured and the clients they answer (every client when undefined). */
interface Claim {
  readonly path: (string | number)[];
  readonly clients: readonly SubnetConfig[] | undefined;
  /** The path of the first record's `clients` key. */
  readonly clientsPath: (string | number)[];
}

/** Types that may share a name with a CNAME when `clients` splits the name between them. */
const SPLIT_TYPES: ReadonlySet<string> = new Set(['A', 'AAAA']);

/** True when both lists name the same subnets (undefined: every client). */
function sameClients(a: readonly SubnetConfig[] | undefined, b: readonly SubnetConfig[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const texts = new Set(a.map((x) => x.text));
  return a.length === b.length && b.every((x) => texts.has(x.text));
}

/**
 * The narrower subnet of the first overlapping pair of two client lists, as text; undefined when
 * no client is in both. A missing list is the complement of the other side's (`clientsSchema.ts`),
 * so it overlaps nothing.
 */
function overlap(a: readonly SubnetConfig[] | undefined, b: readonly SubnetConfig[] | undefined): string | undefined {
  if (a === undefined || b === undefined) return undefined;
  for (const x of a) {
    for (const y of b) if (subnetsOverlap(x.address, x.prefix, y.address, y.prefix)) return (x.prefix >= y.prefix ? x : y).text;
  }
  return undefined;
}

/** Canonical form of a static record's relative owner (`@` stays `@`); the schema validated it. */
function relativeOwner(name: string): string {
  return name === '@' ? '@' : configuredName(name);
}

/** True when an endpoint can produce data for a GSLB record type. */
export function endpointAnswers(e: EndpointConfig, type: GslbRecordType): boolean {
  switch (type) {
    case 'A':
      return e.address !== undefined && isIP(e.address) === 4;
    case 'AAAA':
      return e.address !== undefined && isIP(e.address) === 6;
    case 'SRV':
      return e.target !== undefined && e.port !== undefined;
    case 'CNAME':
    case 'MX':
      return e.target !== undefined;
  }
}
