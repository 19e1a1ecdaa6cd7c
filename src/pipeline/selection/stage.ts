import type { GslbRecordType, RecordData, RecordType } from '../../core/dns/records.js';
import type { Client } from '../../core/model/query.js';
import type { CompiledDataCenter, GslbEndpoint } from '../../core/model/topology.js';
import { ipv4BlocksScope } from '../../core/net/ipv4InIpv6.js';
import type { Location } from '../../core/location/location.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import type { SubnetConfig } from '../../core/net/subnet.js';
import type { HealthView } from '../../core/views/healthView.js';
import type { MetricView } from '../../core/views/metricView.js';
import type { ProbeDemand } from '../../core/views/probeDemand.js';
import type { DelegationRequest, ProximityView } from '../../core/views/proximityView.js';
import type { ResolveContext } from '../../core/views/resolveContext.js';
import type { DecisionCache } from './decisionCache.js';
import type { LocationClasses } from './answerClasses.js';
import type { DecisionStep } from './locationDecision.js';
import type { TraceSink } from './trace.js';

/** A data center that can answer a record: its enabled endpoints of the record's type. */
export interface DcCandidate {
  readonly dc: CompiledDataCenter;
  readonly endpoints: readonly GslbEndpoint[];
  /** Key of this (record, DC) in the rotation store; stable across reloads. */
  readonly rotationKey: string;
}

/** A candidate that passed the gates, with the endpoints that are up now. */
export interface LiveDc {
  readonly candidate: DcCandidate;
  readonly endpoints: readonly GslbEndpoint[];
}

/**
 * One step of a record's selection pipeline (docs/PRODUCT.md §3; README.md, "Writing a stage"). A stage
 * runs over the per-query {@link SelectionState}: it reads what the slots before it left and
 * replaces (never fills in place) what its slot owns. Stages never call each other.
 *
 * The contract with the decision cache (`decisionCache.ts`) is what makes reused answers and ECS
 * scopes right for every client, so a stage must keep it:
 * - every client-derived input it reads goes through the pipeline: the answer class
 *   (`answerClasses.ts#classData`), a client subnet registered at compile time
 *   ({@link ClientInputs.subnets}, tested with the read bit set), or {@link narrowScope} with the
 *   largest aligned block around the client in which the input is constant;
 * - anything else it consults that may differ between two queries with the same answer class,
 *   subnet memberships and health view (rotation, random, the clock, a client hash, the
 *   location itself) it reports by setting {@link SelectionState.varies}: such an outcome is
 *   never reused;
 * - it declares this with {@link cacheable}.
 */
export interface Stage {
  /** Pipeline slot: candidates, gate, policy, rank, pick, balance, fallback. */
  readonly slot: StageSlot;
  /** Name shown in the /explain trace. */
  readonly name: string;
  /**
   * Whether a record running this stage may reuse its decisions (`decisionCache.ts`): `true` when
   * the stage's effect is a function of the working state so far, the record, the health view,
   * and client inputs it reports in {@link SelectionState.clientReads} (the answer class, client
   * subnets) — anything else it consults (rotation, random, the clock, a client hash, the
   * location itself) it reports by setting {@link SelectionState.varies}. A string says why the
   * stage can never be reused (shown by /explain); absent counts as not reusable.
   */
  readonly cacheable?: true | string;
  /**
   * For a stage whose outcome also depends on runtime state the decision cache cannot see (the
   * ordered zone index of the client network, docs/PRODUCT.md §5): that state's current value for
   * `client` at `nowMs`, as an interned object — equal values, the same object — or undefined when
   * there is none to reuse (then the pipeline runs and nothing is stored). The decision cache calls
   * it before the pipeline, keys its entries on the object's identity as well, passes it to the
   * stage in {@link SelectionState.keyed}, and gives a reused decision the scope of its
   * `clientPrefix` (the stage reports that read with {@link KEYED_READ}). The stage's effect must
   * be a function of that value and of what {@link cacheable} allows; when it reads the state
   * otherwise (no value was passed) it sets {@link SelectionState.varies}. Validity is the
   * reader's: it must never return a value that has expired (it is asked on every query, so an
   * entry keyed on an expired value is simply never found again). `count` is false for /explain
   * (read only: no hit counted). At most one stage of a record has it.
   */
  readonly keyedRead?: (client: Client, env: SelectionEnv, nowMs: number, count: boolean) => KeyedReading | undefined;
  run(s: SelectionState): void;
}

/** A value a {@link Stage.keyedRead} returns: interned, so its identity is its value. */
export interface KeyedReading {
  /**
   * The prefix length of the block around the client over which the value is the same (the
   * decision's ECS scope bound, docs/PRODUCT.md §8), or undefined when it was not derived from the
   * client's address.
   */
  readonly clientPrefix: number | undefined;
}

/**
 * What a stage reads from the client's location, declared at compile time so the pipeline can
 * reduce every location of the data to the decision it leads to and merge neighbouring networks
 * with equal decisions into answer classes (`answerClasses.ts`, `locationDecision.ts`). The stage
 * then reads its part of the client's class with `classData(s, index)` instead of the location.
 */
export interface LocationReader {
  /** The slot of the stage that reads it: the readers' steps compose in pipeline order. */
  readonly slot: StageSlot;
  /**
   * Stable text of what the reader is configured with: records whose readers (and candidates) have
   * equal ids share their class tables.
   */
  readonly id: string;
  /**
   * A short text of what the stage reads from one location (`known` is false for a location the
   * data says nothing about): equal texts must give equal {@link classData}. Called once per
   * location of the data at load.
   */
  read(location: Location, known: boolean): string;
  /** What the stage keeps per answer class, computed from the class's first location. */
  classData(location: Location, known: boolean): unknown;
  /**
   * The steps by which the stage decides, given its class data: rules with their residual
   * conditions and rankings, in the order they are tried (`locationDecision.ts`). Two locations
   * whose steps (over all readers of the record) are equal get the same answer under every health
   * state, so they share a class.
   */
  steps(data: unknown): readonly DecisionStep[];
}

/** Where a capability registers, at compile time, the client inputs its stages read. */
export interface ClientInputs {
  /** Registers a location reader; returns its index in the record's answer classes. */
  location(reader: LocationReader): number;
  /**
   * Registers client subnets a stage tests; returns the position of the first. Subnet `first + i`
   * reports its read with `subnetReadBit(first + i)` (the decision cache keys on memberships).
   */
  subnets(list: readonly SubnetConfig[]): number;
  /** Notes that a stage reads the query name (a record under a wildcard is then never cached). */
  qname(): void;
}

/** The fixed order of pipeline slots; later capabilities add stages into slots. */
export const STAGE_SLOTS = ['candidates', 'gate', 'policy', 'rank', 'pick', 'balance', 'fallback'] as const;
export type StageSlot = (typeof STAGE_SLOTS)[number];

/** A GSLB record compiled for selection. */
export interface CompiledGslbRecord {
  /** Canonical owner name. */
  readonly name: string;
  readonly type: GslbRecordType;
  /** Answer TTL in seconds. */
  readonly ttl: number;
  readonly service: string;
  /** Data centers with at least one enabled endpoint of this type, in configuration order. */
  readonly candidates: readonly DcCandidate[];
  /**
   * {@link candidates} as live data centers with all their endpoints: what the candidates stage
   * starts every selection from, built once when the record is compiled and shared (frozen).
   */
  readonly allLive: readonly LiveDc[];
  readonly pipeline: readonly Stage[];
  /** Operator's fail-safe data, answered with {@link failsafeTtl} when selection yields nothing. */
  readonly failsafe: readonly RecordData[];
  readonly failsafeTtl: number;
  /** The record's answer classes over the snapshot's location data (`answerClasses.ts`), when a stage reads the location. */
  readonly locationClasses?: LocationClasses | undefined;
  /** Its reusable decisions, or why it has none (`decisionCache.ts`); one per compiled record, so a reload starts afresh. */
  readonly decisions: DecisionCache;
}

/** What the stages read besides the query: the snapshot's views and the injected context. */
export interface SelectionEnv {
  readonly geo: LocationDb;
  readonly health: HealthView;
  readonly metrics: MetricView;
  /** Where stages that read path measurements of the client note it (the agents' probe-request queue); absent without agents. */
  readonly probes?: ProbeDemand;
  /** The proximity database and ordered zone index cache (network proximity, docs/PRODUCT.md §5); absent when that capability publishes none. */
  readonly proximity?: ProximityView;
  readonly ctx: ResolveContext;
}

/**
 * The per-query working state the stages read and write, in slot order. It lives for one
 * selection only; the inputs (record, client, env) are never modified.
 */
export interface SelectionState {
  readonly record: CompiledGslbRecord;
  readonly client: Client;
  readonly env: SelectionEnv;
  /** The name being answered, as received (the record's name, or the query name under a wildcard record). */
  readonly qname: string;
  /** Candidates that passed the gates (set by candidates and gate stages). */
  live: LiveDc[];
  /**
   * Live data centers a gate could not decide (a metric unknown) under `unknown: rank-last`:
   * kept, but ranked after every other live DC. Empty unless a metric gate set it.
   */
  demoted: readonly LiveDc[];
  /** Rank groups, best first; members of a group are tied (set by rank stages). */
  ranked: LiveDc[][];
  /**
   * Set by a policy-slot stage whose action fixed `ranked` (a DNS policy, docs/PRODUCT.md §4): the
   * rank-slot stages are then skipped.
   */
  rankedByPolicy: boolean;
  /** Data centers chosen for the answer (set by the pick stage). */
  picked: LiveDc[];
  /** Record data of the answer and its TTL (set by balance and fallback stages). */
  data: RecordData[];
  ttl: number;
  /**
   * Set by a stage that answered with records of another type than the record's, `data` holding
   * them: a network-proximity alias, a CNAME into a name delegated to a sub-tier's name servers
   * (docs/PRODUCT.md §5). The stages after it do not run. Undefined otherwise.
   */
  answerType: RecordType | undefined;
  /**
   * Set by a stage whose best candidates are delegated proximity zones resolved recursively
   * (docs/PRODUCT.md §5): the query path asks those zones' name servers (`ProximityView.delegate`)
   * and answers with the sub-tier's records; the stages still run, and their answer (the next
   * zone's) is the one given when no sub-tier answers within the budget. Undefined otherwise.
   */
  delegation: DelegationRequest | undefined;
  /**
   * ECS scope prefix length so far: the largest aligned block around the client inside which
   * every client-derived input used so far is identical (docs/PRODUCT.md §8). 0 until a stage consults the
   * client; each such stage narrows it with {@link narrowScope}.
   */
  scope: number;
  /** Location lookup result, packed `id * 256 + prefix`, or −1 before the first lookup. */
  locationPacked: number;
  /** The context's clock as this selection reads it (ms), or −1 before the first read: see {@link selectionNow}. */
  nowMs: number;
  /** Present only for /explain; stages add steps only when it is set. */
  readonly trace: TraceSink | undefined;
  /**
   * Client inputs the decision read, as bits: {@link LOCATION_READ} for the client's answer
   * class, {@link subnetReadBit}(i) for the record's client subnet i (in the order its
   * conditions were compiled). The decision cache recomputes the ECS scope of a reused decision
   * from exactly these inputs.
   */
  clientReads: number;
  /**
   * Why this outcome may differ for another query with the same record, answer class, subnet
   * memberships and health view (a tie split by rotation, a rotating or random choice among
   * several endpoints, a client-network hash, the client's location itself, a cold-start wait
   * running); undefined while it is a function of those alone. A varying outcome is never reused.
   */
  varies: string | undefined;
  /**
   * The value of the record's {@link Stage.keyedRead} for this query, when the decision cache read
   * it before running the pipeline (the stage then uses it instead of reading the state itself);
   * undefined otherwise.
   */
  keyed: KeyedReading | undefined;
  /** Set by the health gate: whether any endpoint of the record is down, and whether all are. */
  availability?: RecordAvailability;
}

/** What the health gate found for a record, for the fallback stage (all-down policy, TTL while down). */
export interface RecordAvailability {
  /** Some endpoint of the record is down, drained or forced down (unknown does not count). */
  readonly anyDown: boolean;
  /** No endpoint of any tier can answer (unknown ones can: they never lead here). */
  readonly allDown: boolean;
}

/** The outcome of selecting one GSLB record. */
export interface SelectionResult {
  readonly data: RecordData[];
  /** Seconds. */
  readonly ttl: number;
  /** ECS scope prefix length (0: the answer does not depend on the client). */
  readonly scope: number;
  /** Names of the data centers picked (empty when a fallback answered). */
  readonly dcs: string[];
}

/**
 * The time of a selection (ms since the Unix epoch): the context's clock, read once per selection,
 * so every stage judges health windows and metric staleness at the same instant (and the clock,
 * a system call on some hosts, is not read per stage).
 */
export function selectionNow(s: SelectionState): number {
  if (s.nowMs < 0) s.nowMs = s.env.ctx.now();
  return s.nowMs;
}

/** {@link SelectionState.clientReads} bit: the decision read the client's answer class. */
export const LOCATION_READ = 1;

/**
 * {@link SelectionState.clientReads} bit: the decision read the client's {@link SelectionState.keyed}
 * value and narrowed the scope to its `clientPrefix`.
 */
export const KEYED_READ = 1 << 17;

/** Client subnets a record's conditions may test for its decisions to be reusable (bits of {@link SelectionState.clientReads}). */
export const MAX_READ_SUBNETS = 16;

/** {@link SelectionState.clientReads} bit of the record's client subnet `i`; 0 beyond {@link MAX_READ_SUBNETS}. */
export function subnetReadBit(i: number): number {
  return i < MAX_READ_SUBNETS ? 2 << i : 0;
}

/**
 * Records that the decision used a client-derived input constant over a /`prefix` block around
 * the client. For an IPv6 client the block also stops at the IPv6 ranges that carry IPv4
 * addresses (`../geo/ipv4InIpv6.ts`): whatever the input, clients there are answered from other
 * data, so a wider block would hand them this client's answer (RFC 7871 §7.3).
 */
export function narrowScope(s: SelectionState, prefix: number): void {
  const a = s.client.address;
  if (a.family === 6) {
    const floor = ipv4BlocksScope(a);
    if (floor > prefix) prefix = floor;
  }
  if (prefix > s.scope) s.scope = prefix;
}
