import { isInZone } from '../../core/dns/name.js';
import type { AnswerRecord, RecordType, ResourceRecord } from '../../core/dns/records.js';
import type { DelegationRequest } from '../../core/views/proximityView.js';
import { decide } from '../selection/decisionCache.js';
import type { SelectionEnv } from '../selection/stage.js';
import type { Client, SelectedRecord } from '../../core/model/query.js';
import type { AnswerSource } from './authoritative.js';
import { selectionEnv } from './selectionEnv.js';
import { SplitDecision } from './clientSplit.js';
import type { ZoneData, ZoneNode } from './zoneIndex.js';

/** One RRset of an owner name as the engine serves it: static, or selected for one client. */
export interface NameRrset {
  readonly type: RecordType;
  /**
   * Owner names are the canonical owner (a front door echoes the spelling it received). For a
   * GSLB record whose decision was reused (`selection/decisionCache.ts`), the same frozen array of
   * the same frozen records on every call while the decision stays valid: a front door may key a
   * WeakMap on it to reuse its encoding.
   */
  readonly records: readonly ResourceRecord[];
  /**
   * ECS scope prefix length of this RRset in bits of the client's family (RFC 7871 §7.2.1): the
   * selection's scope for a GSLB RRset, 0 for static RRsets and client-independent selections.
   */
  readonly scope: number;
  /** True for an RRset chosen by a GSLB record's selection. */
  readonly selected: boolean;
  /** Data centers the selection answered with (empty for static RRsets and fallbacks). */
  readonly dcs: readonly string[];
  /** The GSLB record selected for this RRset (for the per-record counter); undefined for static RRsets. */
  readonly record: SelectedRecord | undefined;
}

/** Everything an owner name holds, for a server that does the DNS answer logic itself. */
export interface NameContents {
  readonly zone: ZoneData;
  /**
   * True when the name is an owner in the zone or an empty non-terminal above one (RFC 8020);
   * false when it does not exist (the server then tries wildcards or answers NXDOMAIN).
   */
  readonly exists: boolean;
  /**
   * True when a GSLB record was selected: the result may differ per client and per call. False
   * results depend on the snapshot, the name and the type only.
   */
  readonly dynamic: boolean;
  /**
   * Static RRsets first (configuration order of types), then GSLB RRsets; never an empty RRset.
   * Shared between calls when the name has no GSLB record: do not modify.
   */
  readonly rrsets: readonly NameRrset[];
}

/**
 * The RRsets at exactly one owner name: every static RRset and every GSLB record of the name,
 * each GSLB record decided for `client` as `resolve()` does (its decision cache, else the
 * pipeline, so rotation advances as for any answer), with its own ECS scope; `name` is the qname the selection sees (a `*` owner when
 * the server looks up a wildcard: it never says which name it synthesises). No wildcard synthesis, CNAME chasing, referral or
 * negative-answer logic: this serves DNS servers that do that themselves from per-name lookups
 * (PowerDNS's remote backend: `lookup` of a name and of `*.<encloser>` owners, RFC 4592).
 *
 * `name` is canonical (src/core/dns/name.ts). `type` limits the result to one type (GSLB records of
 * other types are then not selected, so their rotation does not move); omitted means all types.
 * `zone`, when given and holding `name`, is used instead of the most specific zone (a server
 * may ask a parent zone about a delegation point). A static RRset hides a GSLB record of the same
 * type, as in `resolve()` (authoritative.ts). A GSLB selection that yields no data (no enabled endpoint and no
 * fail-safe list) contributes no RRset.
 * @returns undefined when no zone holds the name.
 */
export function nameRrsets(
  src: AnswerSource,
  name: string,
  client: Client,
  ctx: SelectionEnv['ctx'],
  type?: RecordType,
  zone?: ZoneData,
): NameContents | undefined {
  return contentsOf(src, name, client, ctx, type, zone, undefined);
}

/**
 * {@link nameRrsets} for a DNS server that waits for the backend (PowerDNS's remote backend): a
 * GSLB selection whose best candidates are delegated proximity zones resolved recursively
 * (`SelectionState.delegation`, docs/PRODUCT.md §5, seed 000 step 6) makes the result a promise in
 * which that RRset holds the sub-tier's authoritative answer — the records it owns at `name`, one
 * RRset per type, TTLs capped by the record's, the ECS scope the longer of the selection's and the
 * sub-tier's, no data centers of this engine — as `resolveFollowing` does for whole answers; when
 * no sub-tier answers within the budget, or it answers nothing at `name`, the selection's own RRset
 * (the next zone's) stays. Every other result stays a plain value, so lookups without a recursive
 * delegation await nothing. A `*` owner is never delegated: the server looks up the wildcard
 * without the name it synthesises, so there is no name to ask the sub-tier. Such a server carries
 * no EDNS option of the client's query, so the delegation hop option starts anew here. Never rejects.
 */
export function nameRrsetsFollowing(
  src: AnswerSource,
  name: string,
  client: Client,
  ctx: SelectionEnv['ctx'],
  type?: RecordType,
  zone?: ZoneData,
): NameContents | undefined | Promise<NameContents> {
  const pending: PendingRrset[] = [];
  const contents = contentsOf(src, name, client, ctx, type, zone, name.startsWith('*.') ? undefined : pending);
  if (contents === undefined || pending.length === 0) return contents;
  return followRrsets(name, client, contents, pending, selectionEnv(src.env, ctx));
}

/** A GSLB record of a name whose selection asked for a delegation. */
interface PendingRrset {
  /** The index in the result's RRsets of its selection's RRset, or where the sub-tier's go when the selection had no data. */
  readonly at: number;
  /** True when the selection added an RRset (at `at`), which a sub-tier's answer replaces. */
  readonly replaces: boolean;
  readonly type: RecordType;
  /** The selection's ECS scope. */
  readonly scope: number;
  readonly record: SelectedRecord;
  readonly request: DelegationRequest;
}

/** Asks the sub-tiers of every pending record (at once) and puts each answer in place of its selection's RRset. */
async function followRrsets(name: string, client: Client, contents: NameContents, pending: readonly PendingRrset[], env: SelectionEnv): Promise<NameContents> {
  const view = env.proximity!;
  const results = await Promise.all(pending.map((p) => view.delegate(p.request, name, p.type, client, undefined)));
  const rrsets: NameRrset[] = [];
  let next = 0;
  for (let i = 0; i <= contents.rrsets.length; i++) {
    let replaced = false;
    for (; next < pending.length && pending[next]!.at === i; next++) {
      const p = pending[next]!;
      const r = results[next];
      const delegated = r === undefined || r === 'refused' ? [] : delegatedRrsets(r.records, name, Math.max(p.scope, r.scope), p.record);
      if (delegated.length === 0) continue;
      for (const d of delegated) rrsets.push(d);
      replaced ||= p.replaces;
    }
    const local = contents.rrsets[i];
    if (local !== undefined && !replaced) rrsets.push(local);
  }
  return { zone: contents.zone, exists: contents.exists, dynamic: true, rrsets };
}

/** A sub-tier's address and CNAME records owned by `name` (compared case-insensitively), as RRsets by type in answer order. */
function delegatedRrsets(records: readonly AnswerRecord[], name: string, scope: number, record: SelectedRecord): NameRrset[] {
  const byType = new Map<RecordType, ResourceRecord[]>();
  for (const r of records) {
    if ((r.type !== 'A' && r.type !== 'AAAA' && r.type !== 'CNAME') || r.name.toLowerCase() !== name) continue;
    let list = byType.get(r.type);
    if (list === undefined) byType.set(r.type, (list = []));
    list.push({ name, type: r.type, ttl: r.ttl, data: r.data });
  }
  const out: NameRrset[] = [];
  for (const [type, list] of byType) out.push({ type, records: list, scope, selected: true, dcs: NO_DCS, record });
  return out;
}

/** {@link nameRrsets}; with `pending` given, each GSLB RRset whose selection asks for a delegation is noted in it. */
function contentsOf(
  src: AnswerSource,
  name: string,
  client: Client,
  ctx: SelectionEnv['ctx'],
  type: RecordType | undefined,
  zone: ZoneData | undefined,
  pending: PendingRrset[] | undefined,
): NameContents | undefined {
  const z = zone && isInZone(name, zone.name) ? zone : (src.zones.zoneOfNode(name) ?? src.zones.findZone(name));
  if (!z) return undefined;
  const node = z.nodes.get(name);
  if (!node) return { zone: z, exists: false, dynamic: false, rrsets: [] };
  if (type === undefined && node.gslb.size === 0 && !node.split) return staticContents(z, node);
  // A name split by `clients` holds, for this client, only the CNAME or only the addresses (`clientSplit.ts`).
  const split = node.split ? new SplitDecision(node.split, client.address) : undefined;
  const rrsets: NameRrset[] = [];
  for (const rrset of staticContents(z, node).rrsets) {
    if ((type === undefined || rrset.type === type) && (!split || split.applies(rrset.type))) rrsets.push(rrset);
  }
  let dynamic = split !== undefined;
  const env = node.gslb.size > 0 ? selectionEnv(src.env, ctx) : undefined;
  for (const [t, record] of node.gslb) {
    if ((type !== undefined && t !== type) || node.rrsets.has(t) || (split && !split.applies(t))) continue;
    dynamic = true;
    const result = decide(record, client, env!, name);
    if (pending !== undefined && result.delegation !== undefined && env!.proximity !== undefined)
      pending.push({ at: rrsets.length, replaces: result.data.length > 0, type: t, scope: result.scope, record, request: result.delegation });
    if (result.data.length === 0) continue;
    // An alias answers another type (a CNAME) at the record's name.
    const answered = result.type ?? t;
    let records = result.records;
    if (records === undefined || name !== record.name) {
      const built: ResourceRecord[] = [];
      for (const data of result.data) built.push({ name, type: answered, ttl: result.ttl, data });
      records = built;
    }
    rrsets.push({ type: answered, records, scope: result.scope, selected: true, dcs: result.dcs, record });
  }
  if (split) {
    // Every RRset of a split name carries the scope of the choice of side (static ones too).
    for (let i = 0; i < rrsets.length; i++) {
      const r = rrsets[i]!;
      if (r.scope < split.scope) rrsets[i] = { ...r, scope: split.scope };
    }
  }
  return { zone: z, exists: true, dynamic, rrsets };
}

/**
 * On a zone node: its static contents, built on first use. A property of the node, not an entry of
 * a module-wide WeakMap: V8 marks WeakMap entries as ephemerons in a full collection's atomic
 * pause, and a reload under load has one per name asked of both snapshots (issue 17; the health
 * gate's memo, `healthGate.ts`, for the measurement).
 */
const STATIC_CONTENTS = Symbol('static contents');

/** A node's static RRsets as a result, built once per node (nodes are immutable snapshot parts). */
function staticContents(zone: ZoneData, node: ZoneNode): NameContents {
  const holder = node as ZoneNode & { [STATIC_CONTENTS]?: NameContents };
  let c = holder[STATIC_CONTENTS];
  if (!c) {
    const rrsets: NameRrset[] = [];
    for (const [t, records] of node.rrsets) rrsets.push({ type: t, records, scope: 0, selected: false, dcs: NO_DCS, record: undefined });
    c = { zone, exists: true, dynamic: false, rrsets };
    holder[STATIC_CONTENTS] = c;
  }
  return c;
}

const NO_DCS: readonly string[] = [];
