import type { SubnetConfig } from '../../core/net/subnet.js';
import type { RecordData, RecordType, ResourceRecord } from '../../core/dns/records.js';
import type { IpAddress } from '../../core/net/ipAddress.js';
import { unpackPrefix } from '../../core/lpm/rangeTable.js';
import { ipv4BlocksScope } from '../../core/net/ipv4InIpv6.js';
import { membershipScope, subnetMembershipWords } from '../../core/net/subnet.js';
import type { HealthView } from '../../core/views/healthView.js';
import type { DelegationRequest } from '../../core/views/proximityView.js';
import type { LocationClasses } from './answerClasses.js';
import { afterRankIndex, runPipeline, runStages, selectionState } from './pipeline.js';
import type { TraceSink } from './trace.js';
import {
  KEYED_READ,
  LOCATION_READ,
  MAX_READ_SUBNETS,
  subnetReadBit,
  type CompiledGslbRecord,
  type KeyedReading,
  type LiveDc,
  type RecordAvailability,
  type SelectionEnv,
  type SelectionState,
  type Stage,
} from './stage.js';
import { type Client } from '../../core/model/query.js';
import { withEncodingSlot } from '../../core/model/encodingSlot.js';

/** A record's answer for one client, as the zones' query path and `nameRrsets` copy it into theirs. */
export interface Decision {
  readonly data: readonly RecordData[];
  /** The type of `data` when a stage answered with another type than the record's (`SelectionState.answerType`); undefined: the record's. */
  readonly type?: RecordType | undefined;
  /** The sub-tier to ask before this answer is given (`SelectionState.delegation`); never set on a reused decision. */
  readonly delegation?: DelegationRequest | undefined;
  /** Seconds. */
  readonly ttl: number;
  /** ECS scope prefix length for this client (0: the answer does not depend on the client). */
  readonly scope: number;
  /** Names of the data centers picked (empty when a fallback answered). */
  readonly dcs: readonly string[];
  /**
   * For a reused decision: `data` as records owned by the record's name with `ttl`, in answer
   * order. The same frozen array of the same frozen records for every query the decision serves,
   * while it stays valid (same compiled record, same health view): a front door may key a
   * WeakMap on the array, or on each record, to reuse its encoding. Undefined when the decision
   * is not reused (the record or this outcome is not cacheable, or a trace was asked for).
   */
  readonly records: readonly ResourceRecord[] | undefined;
  /**
   * For a reused decision whose only client input was the location class (`reads` exactly
   * `LOCATION_READ`: no client subnet, no keyed state): the record's class tables. Every client of
   * the same class and family then gets this decision, with the ECS scope max(`ipv4BlocksScope`,
   * the class block's prefix length) — what the native fast path replays by (`Answer.reuseClass`).
   * Undefined otherwise.
   */
  readonly classTable?: LocationClasses | undefined;
  /** With {@link classTable}: the client's class id in it; else −1. */
  readonly classId?: number;
}

/**
 * What one key's queries reuse: always the decision up to the ranking (the working state after the
 * rank slot, its lists frozen), and the whole answer (all but the ECS scope, which is per client)
 * when the stages after it (pick, balance, fallback) did not vary either. One flat object, so a
 * hit reads one object besides the answer's arrays.
 */
interface Entry {
  /** The client inputs the decision read ({@link SelectionState.clientReads}): they give each client's scope. */
  readonly reads: number;
  readonly live: LiveDc[];
  readonly demoted: readonly LiveDc[];
  readonly ranked: LiveDc[][];
  readonly rankedByPolicy: boolean;
  readonly availability: RecordAvailability | undefined;
  /** False when pick or balance draw (rotation, random, a client hash): they run per query from the ranking, and the fields below are empty. */
  readonly answered: boolean;
  readonly data: readonly RecordData[];
  readonly ttl: number;
  readonly dcs: readonly string[];
  readonly records: readonly ResourceRecord[];
}

/** The subnet arrays of every record that tests no client subnet (empty: nothing is ever written to them). */
const NO_MEMBERS = new Int32Array(0);
const NO_BYTES = new Uint8Array(0);
const NO_WORDS = new Uint32Array(0);
/** The keyed entries of every record without a keyed stage: never written (entries are keyed only when the stage gives a reading). */
const NO_READINGS: Map<KeyedReading, Map<number, Entry>> = new Map();

/** Keys kept per record (over all keyed readings): beyond it the cache starts afresh (a miss costs one pipeline run). */
export const MAX_DECISIONS = 4096;

/** What a record's cacheability is decided from at load. */
export interface DecisionInputs {
  /** Canonical owner name (a `*` first label makes the query name vary). */
  readonly name: string;
  readonly pipeline: readonly Stage[];
  /** True when the decision reads the client's location (static proximity, `clientLocation` conditions). */
  readonly readsLocation: boolean;
  readonly locationClasses: LocationClasses | undefined;
  /** Every client subnet its conditions test, in compilation order. */
  readonly subnets: readonly SubnetConfig[];
  readonly readsQname: boolean;
  /** True when the snapshot is compiled without decision caches (a reference for tests and benchmarks). */
  readonly turnedOff?: boolean;
}

/**
 * The decision cache of one compiled record (gdnsd precomputes results per map and data-center
 * set in the same spirit): a decision whose every input is the record, the client's answer class
 * (`locationClasses.ts`), the client's membership in each client subnet of the record's
 * conditions, and the health view is computed once per such key and reused.
 *
 * Cacheability is decided at load ({@link reason}): every stage must report what it reads
 * (`Stage.cacheable`; metric stages never can), the query name must not vary (a `qname`
 * condition under a wildcard record), a decision that reads the location must have answer
 * classes, and the conditions test at most {@link MAX_READ_SUBNETS} subnets. Then each outcome
 * is checked when computed (`SelectionState.varies`): the working state after the rank slot is
 * stored when nothing up to it varied (the location itself, a running cold-start wait), and the
 * whole answer when pick, balance and fallback did not vary either (no tie split by rotation or a
 * client hash, no rotating or random choice among several endpoints). A key with only its ranking
 * stored runs those three stages per query, so rotation still rotates and time still counts.
 *
 * Validity: the health view is immutable and every change of what the decision reads from it
 * (health transitions, overrides, drain, state-file load, data-center status, hence TTL while
 * down) publishes a new view, so the view's identity is its version: any other view drops every
 * entry. A reload compiles new records, hence new caches. Nothing else depends on timing, but
 * for a record with a keyed stage (`Stage.keyedRead`: network proximity's ordered zone index)
 * the stage's current value is read on every query and is part of the key: entries live per
 * value (its identity), so a value that expired or was replaced is never found again; when the
 * stage has no value to reuse (the index is not cached: a PDB lookup, round-robin), the pipeline
 * runs and nothing is stored.
 *
 * The ECS scope is computed per client from the reads the entry recorded: the answer-class block
 * of the client's address and the membership scope of each subnet the decision tested — the
 * same inputs, so the same scope as the pipeline's. Answers, TTL, scope and data centers equal
 * the pipeline's for every client (`decisionCache.test.ts` checks it differentially).
 *
 * Memory: at most {@link MAX_DECISIONS} keys per record (keys are hundreds of classes × the
 * few subnet combinations clients actually fall in).
 */
export class DecisionCache {
  private view: HealthView | undefined;
  private readonly entries = new Map<number, Entry>();
  /** For a record with a keyed stage: the entries per keyed reading (its identity), instead of {@link entries}. */
  private readonly byReading: Map<KeyedReading, Map<number, Entry>>;
  /** Keys held over {@link byReading}, for the bound. */
  private keyedKeys = 0;
  /** The `clientPrefix` of the last keyed reading (−1: none), for {@link scopeOf}. */
  private keyedPrefix = -1;
  /** Membership (`subnetMembership`, policies/subnet.ts) of the last client keyed, per subnet. */
  private readonly members: Int32Array;
  /** The record's subnets as the query path reads them: family, four network words, prefix length. */
  private readonly subnetFamily: Uint8Array;
  private readonly subnetWords: Uint32Array;
  private readonly subnetPrefix: Uint8Array;
  /** Answer-class block prefix of the last client keyed. */
  private blockPrefix = 0;
  /** Answer-class id of the last client keyed (−1: the record has no class tables). */
  private classId = -1;
  /** The last client keyed's floor for any client-dependent scope (`ipv4InIpv6.ts`; 0 for IPv4). */
  private familyFloor = 0;
  /** Filled for each decision served from an entry; valid until this record's next decision. */
  private readonly served: { -readonly [K in keyof Decision]: Decision[K] } = {
    data: [],
    type: undefined,
    delegation: undefined,
    ttl: 0,
    scope: 0,
    dcs: [],
    records: undefined,
    classTable: undefined,
    classId: -1,
  };

  private constructor(
    /** Why the record's decisions are never reused (shown by /explain); undefined when they are. */
    readonly reason: string | undefined,
    private readonly classes: LocationClasses | undefined,
    private readonly subnets: readonly SubnetConfig[],
    /** Index of the record's first stage after the rank slot. */
    private readonly afterRank: number,
    /** The record's stage's `keyedRead`, if it has one. */
    private readonly keyedRead: Stage['keyedRead'],
  ) {
    // Only records with a keyed stage fill it: the others share one empty map (a map per record was 20,000 objects of a snapshot).
    this.byReading = keyedRead !== undefined ? new Map() : NO_READINGS;
    if (subnets.length === 0) {
      // Most records test no subnet. Shared empty arrays: four ArrayBuffers per record (80,000 over
      // 20,000 records) were a third of a snapshot's objects that V8 tracks apart, swept in every
      // collection of a reload.
      this.members = NO_MEMBERS;
      this.subnetFamily = NO_BYTES;
      this.subnetPrefix = NO_BYTES;
      this.subnetWords = NO_WORDS;
      return;
    }
    this.members = new Int32Array(subnets.length);
    this.subnetFamily = Uint8Array.from(subnets, (sn) => sn.address.family);
    this.subnetPrefix = Uint8Array.from(subnets, (sn) => sn.prefix);
    this.subnetWords = Uint32Array.from(subnets.flatMap((sn) => [sn.address.w0, sn.address.w1, sn.address.w2, sn.address.w3]));
  }

  /** The cache of a record being compiled, or an empty one saying why its decisions cannot be reused. */
  static forRecord(r: DecisionInputs): DecisionCache {
    return new DecisionCache(uncacheableReason(r), r.locationClasses, r.subnets, afterRankIndex(r.pipeline), r.pipeline.find((st) => st.keyedRead)?.keyedRead);
  }

  /** Keys held now, and how many of them hold a whole answer (the others a ranking). */
  get size(): { readonly keys: number; readonly answers: number } {
    let answers = 0;
    for (const e of this.entries.values()) if (e.answered) answers++;
    for (const m of this.byReading.values()) for (const e of m.values()) if (e.answered) answers++;
    return { keys: this.entries.size + this.keyedKeys, answers };
  }

  /**
   * The decision of `record` (whose cache this is) for `client`: an entry's when one holds for
   * the client's key on `env`'s health view (its answer, or its ranking with the stages after it
   * run for this query), else the pipeline's (stored when reusable). The object returned for a
   * reused answer is reused by the next decision of this record: copy what you keep. `qname` as
   * for `runStages`.
   */
  decide(record: CompiledGslbRecord, client: Client, env: SelectionEnv, qname: string): Decision {
    const lc = this.classes;
    if (this.reason !== undefined || (lc !== undefined && lc.geo !== env.geo)) return stateDecision(runStages(record, client, env, undefined, qname));
    if (env.health !== this.view) {
      this.clear();
      this.view = env.health;
    }
    let entries = this.entries;
    let keyed: KeyedReading | undefined;
    let nowMs = -1;
    if (this.keyedRead !== undefined) {
      nowMs = env.ctx.now();
      // An unasked answer reads the keyed state without marking it used or counting (ResolveContext.unasked).
      keyed = this.keyedRead(client, env, nowMs, env.ctx.unasked !== true);
      if (keyed === undefined) {
        // Nothing to reuse (the stage reads its state afresh): the pipeline's decision, not stored.
        const s = selectionState(record, client, env, undefined, qname);
        s.nowMs = nowMs;
        runPipeline(s, 0, record.pipeline.length);
        return stateDecision(s);
      }
      this.keyedPrefix = keyed.clientPrefix ?? -1;
      let m = this.byReading.get(keyed);
      if (m === undefined) {
        m = new Map();
        this.byReading.set(keyed, m);
      }
      entries = m;
    }
    const key = this.keyOf(client.address);
    const e = entries.get(key);
    if (e === undefined) return this.miss(entries, key, keyed, nowMs, record, client, env, qname);
    if (e.answered) return this.serve(e);
    // The ranking is reused; pick, balance and fallback draw for this query (rotation still rotates).
    const s = selectionState(record, client, env, undefined, qname);
    s.keyed = keyed;
    s.nowMs = nowMs;
    s.live = e.live;
    s.demoted = e.demoted;
    s.ranked = e.ranked;
    s.rankedByPolicy = e.rankedByPolicy;
    s.availability = e.availability;
    s.clientReads = e.reads;
    s.scope = this.scopeOf(e.reads);
    runPipeline(s, this.afterRank, record.pipeline.length);
    return stateDecision(s);
  }

  /** Runs the pipeline for a key seen first on this view (and keyed reading) and stores in `entries` what of it may be reused. */
  private miss(
    entries: Map<number, Entry>,
    key: number,
    keyed: KeyedReading | undefined,
    nowMs: number,
    record: CompiledGslbRecord,
    client: Client,
    env: SelectionEnv,
    qname: string,
  ): Decision {
    const s = selectionState(record, client, env, undefined, qname);
    s.keyed = keyed;
    s.nowMs = nowMs;
    runPipeline(s, 0, this.afterRank);
    // A stage that narrowed the scope without reporting the input would make the scope wrong for other clients: not stored.
    const ranked = s.varies === undefined && this.scopeOf(s.clientReads) === s.scope ? freezeRanking(s) : undefined;
    runPipeline(s, this.afterRank, record.pipeline.length);
    if (ranked === undefined) return stateDecision(s);
    const answered = s.varies === undefined && this.scopeOf(s.clientReads) === s.scope;
    const e = entryOf(record, ranked, answered ? s : undefined);
    if (this.entries.size + this.keyedKeys >= MAX_DECISIONS) {
      this.clear();
      if (keyed !== undefined) this.byReading.set(keyed, entries);
    }
    entries.set(key, e);
    if (keyed !== undefined) this.keyedKeys++;
    return answered ? this.serve(e) : stateDecision(s);
  }

  private clear(): void {
    this.entries.clear();
    for (const m of this.byReading.values()) m.clear();
    this.byReading.clear();
    this.keyedKeys = 0;
  }

  private serve(e: Entry): Decision {
    const out = this.served;
    out.data = e.data;
    out.ttl = e.ttl;
    out.scope = this.scopeOf(e.reads);
    out.dcs = e.dcs;
    out.records = e.records;
    // Class-only: no subnet bit and no keyed state read, and no keyed stage whose value could change without a publish.
    const classOnly = e.reads === LOCATION_READ && this.keyedRead === undefined && this.classes !== undefined;
    out.classTable = classOnly ? this.classes : undefined;
    out.classId = classOnly ? this.classId : -1;
    return out;
  }

  /**
   * For /explain, after the full pipeline ran in `s` (traced): whether the record is cacheable,
   * the client's key, and whether an entry for it serves queries now (checked equal to `s`).
   */
  describe(s: SelectionState): Record<string, unknown> {
    if (this.reason !== undefined) return { cacheable: false, reason: this.reason };
    const lc = this.classes;
    if (lc !== undefined && lc.geo !== s.env.geo) return { cacheable: false, reason: 'the answer classes belong to another location database' };
    let entries: Map<number, Entry> | undefined = this.entries;
    let keyed: KeyedReading | undefined;
    if (this.keyedRead !== undefined) {
      keyed = this.keyedRead(s.client, s.env, s.nowMs >= 0 ? s.nowMs : s.env.ctx.now(), false);
      this.keyedPrefix = keyed?.clientPrefix ?? -1;
      entries = keyed === undefined ? undefined : this.byReading.get(keyed);
    }
    const key = this.keyOf(s.client.address);
    const entry = s.env.health === this.view ? entries?.get(key) : undefined;
    const subnetsInside = this.subnets.filter((_, i) => this.members[i]! >= 0).map((sn) => sn.text);
    let served: string;
    if (this.keyedRead !== undefined && keyed === undefined)
      served = 'the keyed stage has no reusable value for this client now: the next query runs the pipeline';
    else if (entry === undefined) served = 'no entry for this key on the current health view: the next query computes and stores it';
    else if (this.scopeOf(entry.reads) !== s.scope) served = 'ENTRY DIFFERS FROM THIS TRACE (scope)';
    else if (!entry.answered) served = 'queries with this key reuse the stored ranking and run pick, balance and fallback';
    else served = sameAnswer(entry, s) ? 'queries with this key are answered from the cache (its answer equals this trace)' : 'ENTRY DIFFERS FROM THIS TRACE';
    return {
      cacheable: true,
      key: { family: s.client.address.family, answerClass: lc ? Math.floor(lc.lookup(s.client.address) / 256) : null, subnetsInside },
      outcome:
        s.varies !== undefined
          ? `answer not reused: ${s.varies}`
          : this.keyedRead !== undefined
            ? 'answer reused for this key while the keyed value (the ordered zone index) and the health view stay'
            : 'answer reused for this key until the health view changes',
      served,
    };
  }

  /**
   * The client's key: its address family, its answer class, then one bit per subnet (inside or
   * not); sets the scratch fields {@link scopeOf} reads. The family is part of the key because
   * scopes are counted in bits of the client's family and IPv6 scopes have a floor of their own.
   */
  private keyOf(a: IpAddress): number {
    let key = a.family === 6 ? 1 : 0;
    this.familyFloor = ipv4BlocksScope(a);
    const lc = this.classes;
    if (lc !== undefined) {
      const packed = lc.lookup(a);
      this.blockPrefix = unpackPrefix(packed);
      this.classId = (packed - this.blockPrefix) / 256;
      key += this.classId * 2;
    }
    const words = this.subnetWords;
    for (let i = 0; i < this.subnetPrefix.length; i++) {
      const w = i * 4;
      const m = subnetMembershipWords(a, this.subnetFamily[i]!, words[w]!, words[w + 1]!, words[w + 2]!, words[w + 3]!, this.subnetPrefix[i]!);
      this.members[i] = m;
      key = key * 2 + (m >= 0 ? 1 : 0);
    }
    return key;
  }

  /**
   * The ECS scope of the last client keyed for a decision that read `reads`: the widest of the
   * read inputs' blocks, as `narrowScope` (types.ts) computes it in the pipeline — including the
   * IPv6 floor once anything about the client was read.
   */
  private scopeOf(reads: number): number {
    if (reads === 0) return 0;
    let scope = this.familyFloor;
    if ((reads & LOCATION_READ) !== 0 && this.blockPrefix > scope) scope = this.blockPrefix;
    if ((reads & KEYED_READ) !== 0 && this.keyedPrefix > scope) scope = this.keyedPrefix;
    for (let i = 0; i < this.members.length; i++) {
      if ((reads & subnetReadBit(i)) === 0) continue;
      const p = membershipScope(this.members[i]!);
      if (p > scope) scope = p;
    }
    return scope;
  }
}

/**
 * The decision of a record for a client: reused from its cache when it may be, else the
 * pipeline's. With `trace` (/explain) the full pipeline always runs and a `decision-cache` step
 * says whether the cache serves this key or why the record is not cacheable.
 */
export function decide(record: CompiledGslbRecord, client: Client, env: SelectionEnv, qname: string, trace?: TraceSink): Decision {
  if (trace === undefined) return record.decisions.decide(record, client, env, qname);
  const s = runStages(record, client, env, trace, qname);
  trace.step('decision-cache', record.decisions.describe(s));
  return stateDecision(s);
}

const NO_RECORDS: readonly ResourceRecord[] = Object.freeze([]);
const NO_DATA: readonly RecordData[] = Object.freeze([]);
const NO_DCS: readonly string[] = Object.freeze([]);

function stateDecision(s: SelectionState): Decision {
  const picked = s.picked;
  const dcs: string[] = [];
  for (let i = 0; i < picked.length; i++) dcs.push(picked[i]!.candidate.dc.name);
  // The fields of a served decision too (classTable, classId), so the query path reads decisions of one shape.
  return {
    data: s.data,
    type: s.answerType,
    delegation: s.delegation,
    ttl: s.ttl,
    scope: s.scope,
    dcs,
    records: undefined,
    classTable: undefined,
    classId: -1,
  };
}

/**
 * The state after the rank slot with its lists frozen (the stages after it only read them);
 * `s.clientReads` and `s.availability` as they stand then.
 */
function freezeRanking(s: SelectionState): SelectionState {
  for (const group of s.ranked) Object.freeze(group);
  Object.freeze(s.ranked);
  Object.freeze(s.live);
  Object.freeze(s.demoted);
  return { ...s };
}

/** An entry from the ranking state `r`, with the answer of `s` when given (the whole pipeline did not vary). */
function entryOf(record: CompiledGslbRecord, r: SelectionState, s: SelectionState | undefined): Entry {
  let data = NO_DATA;
  let records = NO_RECORDS;
  let dcs = NO_DCS;
  if (s !== undefined && s.data.length > 0) {
    data = Object.freeze(s.data.slice());
    // Each with a slot for the doors' encodings (`encodingSlot.ts`), given before it is frozen.
    records = Object.freeze(withEncodingSlot(data.map((d) => Object.freeze(withEncodingSlot({ name: record.name, type: record.type, ttl: s.ttl, data: d })))));
  }
  if (s !== undefined) dcs = Object.freeze(s.picked.map((l) => l.candidate.dc.name));
  return {
    reads: (s ?? r).clientReads,
    live: r.live,
    demoted: r.demoted,
    ranked: r.ranked,
    rankedByPolicy: r.rankedByPolicy,
    availability: r.availability,
    answered: s !== undefined,
    data,
    ttl: s !== undefined ? s.ttl : 0,
    dcs,
    records,
  };
}

function sameAnswer(e: Entry, s: SelectionState): boolean {
  return (
    e.ttl === s.ttl &&
    e.data.length === s.data.length &&
    e.data.every((d, i) => d === s.data[i]) &&
    e.dcs.join() === s.picked.map((l) => l.candidate.dc.name).join()
  );
}

function uncacheableReason(r: DecisionInputs): string | undefined {
  if (r.turnedOff) return 'the decision cache is turned off for this snapshot';
  if (r.pipeline.filter((st) => st.keyedRead !== undefined).length > 1) return 'more than one stage reads keyed state';
  for (const stage of r.pipeline) {
    if (stage.cacheable === true) continue;
    return `stage ${stage.name}: ${stage.cacheable ?? 'does not report what it reads'}`;
  }
  if (r.readsQname && (r.name === '*' || r.name.startsWith('*.'))) return 'a condition reads the query name, which varies under a wildcard record';
  if (r.readsLocation && r.locationClasses === undefined) return 'it reads the location and the location database cannot be enumerated (no answer classes)';
  if (r.subnets.length > MAX_READ_SUBNETS) return `its conditions test ${r.subnets.length} client subnets (at most ${MAX_READ_SUBNETS} for the cache key)`;
  return undefined;
}
