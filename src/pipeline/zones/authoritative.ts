import { canonicalName, parentName } from '../../core/dns/name.js';
import { RECORD_TYPES, TYPE_CODES, type RecordType, type ResourceRecord } from '../../core/dns/records.js';
import { decide } from '../selection/decisionCache.js';
import { TraceSink } from '../selection/trace.js';
import { RCODE } from '../../core/dns/rcode.js';
import type { Answer, Client, Query } from '../../core/model/query.js';
import type { CompiledGslbRecord, SelectionEnv } from '../selection/stage.js';
import { selectionEnv } from './selectionEnv.js';
import type { ZoneData, ZoneIndex, ZoneNode } from './zoneIndex.js';

/** One GSLB selection inside an explained answer. */
export interface ExplainedSelection {
  readonly record: string;
  readonly type: string;
  readonly steps: TraceSink['steps'];
  readonly scope: number;
}

/** What {@link resolve} needs from a snapshot. */
export interface AnswerSource {
  readonly zones: ZoneIndex;
  readonly env: Omit<SelectionEnv, 'ctx'>;
}

/** Record types by numeric code: an array, as the query path reads it once per query. */
const TYPE_BY_CODE: (RecordType | undefined)[] = [];
for (const t of RECORD_TYPES) TYPE_BY_CODE[TYPE_CODES[t]] = t;
const CNAME_CODE = TYPE_CODES.CNAME;
const ANY_CODE = TYPE_CODES.ANY;
const DS_CODE = 43;
const DOT = 0x2e;
/** Longest CNAME chain followed inside our zones before the answer is returned as it stands. */
const MAX_CHAIN = 8;

/**
 * Answers a query from the zones (RFC 1034 §4.3.2 without recursion): REFUSED outside our
 * zones; referrals (AA clear, glue) at delegations; CNAME chains followed through our zones;
 * wildcards (RFC 4592); NXDOMAIN vs NODATA with empty non-terminals as NODATA (RFC 8020) and the
 * SOA at the negative TTL (RFC 2308 §5); ANY over UDP answered with one synthesised HINFO
 * (RFC 8482 §4.2). GSLB records are selected for `q.client`; pass `explain` to collect traces.
 */
export function resolve(q: Query, src: AnswerSource, ctx: SelectionEnv['ctx'], explain?: ExplainedSelection[]): Answer {
  const out: Answer = {
    rcode: RCODE.NOERROR,
    authoritative: true,
    answers: [],
    authority: [],
    additional: [],
    scope: 0,
    dcs: [],
    zone: undefined,
    selected: undefined,
  };
  let owner = q.name.charCodeAt(q.name.length - 1) === DOT ? q.name.slice(0, -1) : q.name;
  // Most queries name a node of a zone in canonical form: one lookup finds the zone and the node.
  let name = owner;
  let zone: ZoneData;
  const owned = src.zones.nodeOf(name);
  let known = owned?.node;
  if (owned) {
    zone = owned.zone;
  } else {
    name = canonicalName(q.name);
    const z = src.zones.findZone(name);
    if (!z) {
      out.rcode = RCODE.REFUSED;
      out.authoritative = false;
      return out;
    }
    zone = z;
  }
  out.zone = zone.name;
  // Built on the first GSLB selection only: static answers never need it.
  const sel: Selection = { src, ctx, env: undefined, explain };
  // Names already answered on a CNAME chain; only chains need it, so it is created on the first hop.
  let seen: Set<string> | undefined;
  for (let hop = 0; hop <= MAX_CHAIN; hop++) {
    const cut = zone.hasDelegations ? findCut(zone, name, q.type) : undefined;
    if (cut) {
      referral(out, zone, cut, hop === 0);
      return out;
    }
    let node = known ?? zone.nodes.get(name);
    known = undefined;
    if (!node) {
      node = wildcardFor(zone, name);
      if (!node) {
        out.rcode = RCODE.NXDOMAIN;
        negative(out, zone);
        return out;
      }
    }
    const target = cnameOf(node, owner, zone, q, out, sel);
    if (target !== undefined) {
      seen ??= new Set();
      seen.add(name);
      if (seen.has(target)) return out;
      const next = src.zones.findZone(target);
      if (!next) return out;
      zone = next;
      name = target;
      owner = target;
      continue;
    }
    if (q.type === ANY_CODE) {
      anyAnswer(node, owner, zone, q, out, sel);
      return out;
    }
    const type = TYPE_BY_CODE[q.type];
    const found = type ? answerType(node, type, owner, zone, q, out, sel) : false;
    if (!found) negative(out, zone);
    else if (type === 'NS' && node.name === zone.name) addGlue(out, zone, node.rrsets.get('NS') ?? []);
    return out;
  }
  return out;
}

/** The highest delegation point strictly below the apex on the way to `name` (none for DS at the cut itself). */
function findCut(zone: ZoneData, name: string, qtype: number): ZoneNode | undefined {
  let cut: ZoneNode | undefined;
  for (let n = name; n !== zone.name && n !== ''; n = parentName(n)) {
    const node = zone.nodes.get(n);
    if (node?.delegation && !(n === name && qtype === DS_CODE)) cut = node;
  }
  return cut;
}

function referral(out: Answer, zone: ZoneData, cut: ZoneNode, first: boolean): void {
  if (first) out.authoritative = false;
  const ns = cut.rrsets.get('NS') ?? [];
  out.authority.push(...ns);
  addGlue(out, zone, ns);
}

/** Adds A/AAAA records of NS targets that lie inside the zone (glue, RFC 1034 §4.2.1). */
function addGlue(out: Answer, zone: ZoneData, ns: readonly ResourceRecord[]): void {
  for (const r of ns) {
    const glue = zone.nodes.get(r.data as string);
    if (!glue) continue;
    out.additional.push(...(glue.rrsets.get('A') ?? []), ...(glue.rrsets.get('AAAA') ?? []));
  }
}

/** The wildcard node that synthesises `name` (RFC 4592 §3.3.1): `*.` + closest encloser, if any. */
function wildcardFor(zone: ZoneData, name: string): ZoneNode | undefined {
  let encloser = parentName(name);
  while (!zone.nodes.has(encloser)) {
    if (encloser === zone.name || encloser === '') return undefined;
    encloser = parentName(encloser);
  }
  return zone.nodes.get(encloser === '' ? '*' : `*.${encloser}`);
}

function negative(out: Answer, zone: ZoneData, ttl = zone.negativeTtl): void {
  if (out.authority.length > 0 && out.authority[out.authority.length - 1]!.type === 'SOA') return;
  out.authority.push({ ...zone.soa, ttl: Math.min(ttl, zone.negativeTtl) });
}

/** Adds the CNAME at `node` (static or selected) when the query is not for CNAME; returns its target. */
function cnameOf(node: ZoneNode, owner: string, zone: ZoneData, q: Query, out: Answer, sel: Selection): string | undefined {
  if (q.type === CNAME_CODE) return undefined;
  const stat = node.rrsets.get('CNAME');
  if (stat) {
    out.answers.push(withOwner(stat[0]!, owner));
    return stat[0]!.data as string;
  }
  const gslb = node.gslb.get('CNAME');
  if (!gslb) return undefined;
  const first = out.answers.length;
  return select(gslb, owner, q.client, out, sel, zone) > 0 ? (out.answers[first]!.data as string) : undefined;
}

function answerType(node: ZoneNode, type: RecordType, owner: string, zone: ZoneData, q: Query, out: Answer, sel: Selection): boolean {
  const stat = node.rrsets.get(type);
  if (stat) {
    for (const r of stat) out.answers.push(withOwner(r, owner));
    return true;
  }
  const gslb = node.gslb.get(type);
  if (!gslb) return false;
  select(gslb, owner, q.client, out, sel, zone);
  return true;
}

function anyAnswer(node: ZoneNode, owner: string, zone: ZoneData, q: Query, out: Answer, sel: Selection): void {
  if (node.rrsets.size === 0 && node.gslb.size === 0) {
    negative(out, zone);
    return;
  }
  if (q.transport === 'udp') {
    // RFC 8482 §4.2: one synthesised HINFO instead of every RRset.
    out.answers.push({ name: owner, type: 'HINFO', ttl: zone.soa.ttl, data: { cpu: 'RFC8482', os: '' } });
    return;
  }
  for (const rrs of node.rrsets.values()) for (const r of rrs) out.answers.push(withOwner(r, owner));
  for (const g of node.gslb.values()) select(g, owner, q.client, out, sel);
}

/** What GSLB selections of one query share: the environment, built on first use, and the traces. */
interface Selection {
  readonly src: AnswerSource;
  readonly ctx: SelectionEnv['ctx'];
  env: SelectionEnv | undefined;
  readonly explain: ExplainedSelection[] | undefined;
}

/**
 * Runs a GSLB record's selection and adds its records to the answer section; returns how many.
 * A selection with no data (the record's all-down policy is fail-closed, src/capabilities/health/README.md)
 * means NODATA: with `zone` given, the SOA
 * goes into the authority section at min(the selection's TTL, the zone's negative TTL) (RFC 2308
 * §2.2, §5), and the answer's ECS scope stays as it is (negative answers carry scope 0, docs/PRODUCT.md §8).
 */
function select(record: CompiledGslbRecord, owner: string, client: Client, out: Answer, sel: Selection, zone?: ZoneData): number {
  const explain = sel.explain;
  const trace = explain ? new TraceSink() : undefined;
  const env = (sel.env ??= selectionEnv(sel.src.env, sel.ctx));
  const d = decide(record, client, env, owner, trace);
  (out.selected ??= []).push(record);
  // d.records is set exactly when the decision is reused for the client's whole key (decisionCache.ts).
  if (d.records === undefined) out.reuseScope = -1;
  else if (out.reuseScope === undefined || (out.reuseScope >= 0 && d.scope > out.reuseScope)) out.reuseScope = d.scope;
  const data = d.data;
  if (data.length === 0) {
    if (zone) negative(out, zone, d.ttl);
    if (trace) explain!.push({ record: record.name, type: record.type, steps: trace.steps, scope: 0 });
    return 0;
  }
  if (d.scope > out.scope) out.scope = d.scope;
  const dcs = d.dcs;
  for (let i = 0; i < dcs.length; i++) out.dcs.push(dcs[i]!);
  if (trace) explain!.push({ record: record.name, type: record.type, steps: trace.steps, scope: d.scope });
  const records = d.records;
  if (records !== undefined && owner === record.name) {
    // A reused decision's records: the same objects for every query it serves.
    for (let i = 0; i < records.length; i++) out.answers.push(records[i]!);
    return records.length;
  }
  const type = d.type ?? record.type;
  const ttl = d.ttl;
  for (let i = 0; i < data.length; i++) out.answers.push({ name: owner, type, ttl, data: data[i]! });
  return data.length;
}

function withOwner(r: ResourceRecord, owner: string): ResourceRecord {
  return r.name === owner ? r : { name: owner, type: r.type, ttl: r.ttl, data: r.data };
}
