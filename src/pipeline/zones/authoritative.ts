import { canonicalName, parentName } from '../../core/dns/name.js';
import { RECORD_TYPES, TYPE_CODES, type AnswerRecord, type RecordType, type ResourceRecord } from '../../core/dns/records.js';
import { decide } from '../selection/decisionCache.js';
import { TraceSink } from '../selection/trace.js';
import { RCODE } from '../../core/dns/rcode.js';
import type { Answer, Client, Query } from '../../core/model/query.js';
import type { CompiledGslbRecord, SelectionEnv } from '../selection/stage.js';
import { selectionEnv } from './selectionEnv.js';
import { SplitDecision } from './clientSplit.js';
import type { ZoneData, ZoneIndex, ZoneNode } from './zoneIndex.js';
import type { DelegationAttempt, DelegationRequest, DelegationTrace } from '../../core/views/proximityView.js';

/** One GSLB selection inside an explained answer. */
export interface ExplainedSelection {
  readonly record: string;
  readonly type: string;
  readonly steps: TraceSink['steps'];
  readonly scope: number;
}

/** A recursive delegation inside an explained answer: what the sub-tier was asked and what came back. */
export interface ExplainedDelegation {
  readonly record: string;
  readonly type: RecordType;
  /** The delegated zones asked, best first. */
  readonly zones: readonly string[];
  readonly budgetMs: number;
  /** `answered` (a sub-tier answered now), `cached` (the engine's answer cache), `failed` (none within the budget), `refused` (loop protection). */
  readonly result: NonNullable<DelegationTrace['result']>;
  /** The time the delegation took (ms). */
  readonly ms: number;
  /** The delegated zone whose name server answered, and its answer (TTLs capped by the record's) and ECS scope. */
  readonly answered?: { readonly zone: string; readonly records: readonly AnswerRecord[]; readonly scope: number };
  /** When no sub-tier answered: the zone and data centers of the selection's own answer, which stands. */
  readonly instead?: { readonly zone: string | undefined; readonly dcs: readonly string[] };
  readonly attempts: readonly DelegationAttempt[];
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
  return answerQuery(q, { src, ctx, env: undefined, explain, follow: false, pending: undefined });
}

/**
 * {@link resolve} for the front doors: a GSLB selection whose best candidates are delegated
 * proximity zones resolved recursively (`SelectionState.delegation`, docs/PRODUCT.md §5, seed 000
 * step 6) makes the answer a promise of the sub-tier's authoritative answer — its records in place
 * of the selection's, AA set, TTLs capped by the record's, the ECS scope the longer of the
 * selection's and the sub-tier's — or, when no sub-tier answers within the budget, of the
 * selection's own answer (the next zone's). Every other answer stays a plain value. A query whose
 * delegation hop option shows a loop is REFUSED. Never rejects for a sub-tier's failure.
 */
export function resolveFollowing(q: Query, src: AnswerSource, ctx: SelectionEnv['ctx']): Answer | Promise<Answer> {
  const sel: Selection = { src, ctx, env: undefined, explain: undefined, follow: true, pending: undefined };
  const out = answerQuery(q, sel);
  return sel.pending === undefined ? out : followDelegations(q, out, sel.pending, sel.env!);
}

/**
 * {@link resolveFollowing} for `/explain`: the traces go to `explain`, and each recursive
 * delegation is asked as a trial (`ProximityView.delegate` with a trace: the sub-tier is asked the
 * same way within the same budget and the answer cache is read, but neither the cache nor the
 * delegation metrics change) and reported in `delegations`.
 */
export function resolveExplained(
  q: Query,
  src: AnswerSource,
  ctx: SelectionEnv['ctx'],
  explain: ExplainedSelection[],
  delegations: ExplainedDelegation[],
): Answer | Promise<Answer> {
  const sel: Selection = { src, ctx, env: undefined, explain, follow: true, pending: undefined };
  const out = answerQuery(q, sel);
  return sel.pending === undefined ? out : followDelegations(q, out, sel.pending, sel.env!, delegations);
}

function answerQuery(q: Query, sel: Selection): Answer {
  const src = sel.src;
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
    moreSelected: undefined,
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
    // A name split by `clients` answers each client from one side only: the CNAME, or the addresses.
    const split = node.split ? new SplitDecision(node.split, q.client.address) : undefined;
    const target = split && !split.cname ? undefined : cnameOf(node, owner, zone, q, out, sel);
    if (split) narrowBySplit(out, split);
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
      anyAnswer(node, owner, zone, q, out, sel, split);
      if (split) narrowBySplit(out, split);
      return out;
    }
    const type = TYPE_BY_CODE[q.type];
    const found = type && (!split || split.applies(type)) ? answerType(node, type, owner, zone, q, out, sel) : false;
    if (split) narrowBySplit(out, split);
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

function anyAnswer(node: ZoneNode, owner: string, zone: ZoneData, q: Query, out: Answer, sel: Selection, split: SplitDecision | undefined): void {
  if (node.rrsets.size === 0 && node.gslb.size === 0) {
    negative(out, zone);
    return;
  }
  if (q.transport === 'udp') {
    // RFC 8482 §4.2: one synthesised HINFO instead of every RRset.
    out.answers.push({ name: owner, type: 'HINFO', ttl: zone.soa.ttl, data: { cpu: 'RFC8482', os: '' } });
    return;
  }
  const before = out.answers.length;
  for (const [type, rrs] of node.rrsets) if (!split || split.applies(type)) for (const r of rrs) out.answers.push(withOwner(r, owner));
  for (const [type, g] of node.gslb) if (!split || split.applies(type)) select(g, owner, q.client, out, sel);
  if (out.answers.length === before) negative(out, zone);
}

/**
 * Gives the answer the scope of a split name's choice of side (`clientSplit.ts`), negative
 * answers included: a NODATA for one side's clients must not be cached for the other side's.
 * The whole answer is the same only inside that block, so it also bounds the block a reused
 * answer is replayed for.
 */
function narrowBySplit(out: Answer, split: SplitDecision): void {
  if (split.scope > out.scope) out.scope = split.scope;
  if (out.reuseScope === undefined || (out.reuseScope >= 0 && split.scope > out.reuseScope)) out.reuseScope = split.scope;
  // The split's block is not a class block: the answer holds for the client's block only.
  out.reuseClass = null;
}

/** What GSLB selections of one query share: the environment, built on first use (static answers never need it), and the traces. */
interface Selection {
  readonly src: AnswerSource;
  readonly ctx: SelectionEnv['ctx'];
  env: SelectionEnv | undefined;
  readonly explain: ExplainedSelection[] | undefined;
  /** True when delegations are followed ({@link resolveFollowing}); false: the selection's own answer stands. */
  readonly follow: boolean;
  /** The selections that asked for a delegation, in answer order. */
  pending: PendingDelegation[] | undefined;
}

/** A selection's records in the answer, to be replaced by a sub-tier's answer. */
interface PendingDelegation {
  readonly request: DelegationRequest;
  readonly owner: string;
  readonly type: RecordType;
  /** Where the selection's records, data centers and negative SOA start in the answer's sections, and how many records it added. */
  readonly answersAt: number;
  readonly count: number;
  readonly dcsAt: number;
  readonly dcsCount: number;
  readonly authorityAt: number;
}

/**
 * Asks the sub-tiers of every pending delegation (at once) and puts each answer that came in place
 * of its selection's records (from the last, so earlier positions hold).
 */
async function followDelegations(
  q: Query,
  out: Answer,
  pending: readonly PendingDelegation[],
  env: SelectionEnv,
  explained?: ExplainedDelegation[],
): Promise<Answer> {
  const view = env.proximity!;
  const traces = explained && pending.map((): DelegationTrace => ({ result: undefined, ms: 0, attempts: [] }));
  const results = await Promise.all(pending.map((p, i) => view.delegate(p.request, p.owner, p.type, q.client, q.delegationHop, traces?.[i])));
  if (traces !== undefined)
    pending.forEach((p, i) => {
      const r = results[i];
      const t = traces[i]!;
      explained!.push({
        record: p.owner,
        type: p.type,
        zones: p.request.zones,
        budgetMs: p.request.budgetMs,
        result: t.result ?? 'failed',
        ms: t.ms,
        ...(r !== undefined && r !== 'refused'
          ? { answered: { zone: r.zone, records: r.records, scope: r.scope } }
          : { instead: { zone: p.request.fallbackZone, dcs: out.dcs.slice(p.dcsAt, p.dcsAt + p.dcsCount) } }),
        attempts: t.attempts,
      });
    });
  for (let i = pending.length - 1; i >= 0; i--) {
    const r = results[i];
    const p = pending[i]!;
    if (r === 'refused') return { rcode: RCODE.REFUSED, authoritative: false, answers: [], authority: [], additional: [], scope: 0, dcs: [], reuseScope: -1 };
    if (r === undefined) continue;
    out.answers.splice(p.answersAt, p.count, ...r.records);
    out.dcs.splice(p.dcsAt, p.dcsCount);
    // The selection's NODATA SOA (no local answer) is no longer negative.
    out.authority.length = p.authorityAt;
    if (r.scope > out.scope) out.scope = r.scope;
  }
  return out;
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
  if (d.delegation !== undefined && sel.follow && env.proximity !== undefined)
    (sel.pending ??= []).push({
      request: d.delegation,
      owner,
      type: record.type,
      answersAt: out.answers.length,
      count: d.data.length,
      dcsAt: out.dcs.length,
      dcsCount: d.data.length === 0 ? 0 : d.dcs.length,
      authorityAt: out.authority.length,
    });
  if (out.selected === undefined) out.selected = record;
  else (out.moreSelected ??= []).push(record);
  // d.records is set exactly when the decision is reused for the client's whole key (decisionCache.ts).
  if (d.records === undefined) out.reuseScope = -1;
  else if (out.reuseScope === undefined || (out.reuseScope >= 0 && d.scope > out.reuseScope)) out.reuseScope = d.scope;
  // Class-only on one table and one class for every selection, or not at all (null).
  const classTable = d.records === undefined ? undefined : d.classTable;
  if (classTable === undefined) out.reuseClass = null;
  else if (out.reuseClass === undefined) {
    out.reuseClass = classTable;
    out.reuseClassId = d.classId;
  } else if (out.reuseClass !== classTable || out.reuseClassId !== d.classId) out.reuseClass = null;
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
