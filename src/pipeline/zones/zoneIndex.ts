import { isInZone, parentName } from '../../core/dns/name.js';
import { canonicalIpText } from '../../core/net/ipAddress.js';
import type { RecordType, ResourceRecord, SoaData } from '../../core/dns/records.js';
import type { CompiledGslbRecord } from '../selection/stage.js';
import type { ClientSplit } from './clientSplit.js';
import { runSteps, type Steps } from '../selection/steps.js';

/** One owner name in a zone: its static RRsets and GSLB records. An empty node is an empty non-terminal. */
export interface ZoneNode {
  readonly name: string;
  readonly rrsets: ReadonlyMap<RecordType, readonly ResourceRecord[]>;
  readonly gslb: ReadonlyMap<RecordType, CompiledGslbRecord>;
  /** True for a zone cut below the apex (an NS RRset that delegates a child zone). */
  readonly delegation: boolean;
  /** Set when `clients` splits the name between a CNAME and address records (`clientSplit.ts`). */
  readonly split?: ClientSplit;
}

const NO_RRSETS: ReadonlyMap<RecordType, readonly ResourceRecord[]> = new Map();
const NO_GSLB: ReadonlyMap<RecordType, CompiledGslbRecord> = new Map();

/** A zone ready for answering. */
export interface ZoneData {
  /** Canonical apex name. */
  readonly name: string;
  readonly soa: ResourceRecord & { readonly data: SoaData };
  /** TTL (s) of negative answers and of the SOA sent with them: min(SOA TTL, SOA MINIMUM) (RFC 2308 §5). */
  readonly negativeTtl: number;
  readonly nodes: ReadonlyMap<string, ZoneNode>;
  /** True when some node below the apex delegates; lets lookups skip the cut search otherwise. */
  readonly hasDelegations: boolean;
}

/** A node together with the zone it answers from. */
export interface OwnedNode {
  readonly zone: ZoneData;
  readonly node: ZoneNode;
}

/** All zones, found by longest suffix match of a query name. */
export class ZoneIndex {
  private readonly byName: ReadonlyMap<string, ZoneData>;
  /** Every owner name (and empty non-terminal) → its node in the zone {@link findZone} gives for it. */
  private readonly byOwner: ReadonlyMap<string, OwnedNode>;

  /** `owners`: the owner map {@link ZoneIndex.build} computed; computed here when absent. */
  constructor(zones: readonly ZoneData[], owners?: ReadonlyMap<string, OwnedNode>) {
    this.byName = new Map(zones.map((z) => [z.name, z]));
    this.byOwner = owners ?? runSteps(ownerSteps(this.byName, Infinity));
  }

  /**
   * The index of `zones`, built by a generator that yields after every `step` owner names (the
   * sliced compilation of `snapshot.ts`); the index is its return value.
   */
  static *build(zones: readonly ZoneData[], step: number): Steps<ZoneIndex> {
    const owners = yield* ownerSteps(new Map(zones.map((z) => [z.name, z])), step);
    return new ZoneIndex(zones, owners);
  }

  /**
   * The zone of a name that is a node of it, in one map lookup; undefined for any other name
   * (not canonical, not in our zones, or not a node: use {@link findZone}). A hit means the
   * name is canonical, so a query name found here needs no canonicalisation.
   */
  zoneOfNode(name: string): ZoneData | undefined {
    return this.byOwner.get(name)?.zone;
  }

  /** {@link zoneOfNode} with the node itself: the query path finds both in one map lookup. */
  nodeOf(name: string): OwnedNode | undefined {
    return this.byOwner.get(name);
  }

  /** The zone holding `name` (canonical), the most specific one when zones nest. */
  findZone(name: string): ZoneData | undefined {
    return findZoneIn(this.byName, name);
  }

  get zones(): IterableIterator<ZoneData> {
    return this.byName.values();
  }

  zone(name: string): ZoneData | undefined {
    return this.byName.get(name);
  }
}

/** The most specific zone of `byName` holding `name`. */
function findZoneIn(byName: ReadonlyMap<string, ZoneData>, name: string): ZoneData | undefined {
  let n = name;
  for (;;) {
    const z = byName.get(n);
    if (z) return z;
    if (n === '') return undefined;
    n = parentName(n);
  }
}

/** Every owner name → its node in the most specific zone holding it; yields after every `step` names. */
function* ownerSteps(byName: ReadonlyMap<string, ZoneData>, step: number): Steps<Map<string, OwnedNode>> {
  const byOwner = new Map<string, OwnedNode>();
  let n = 0;
  for (const z of byName.values()) {
    for (const [name, node] of z.nodes) {
      if (findZoneIn(byName, name) === z) byOwner.set(name, Object.freeze({ zone: z, node }));
      if (++n % step === 0) yield;
    }
  }
  return byOwner;
}

/** Mutable node used while a zone is being built. */
interface NodeBuilder {
  name: string;
  rrsets: Map<RecordType, ResourceRecord[]>;
  gslb: Map<RecordType, CompiledGslbRecord>;
}

/**
 * Builds a zone's node map: every owner name, plus every empty non-terminal between the apex and
 * an owner (so that they answer NODATA, not NXDOMAIN: RFC 8020).
 */
export function buildZone(
  apex: string,
  soa: ResourceRecord & { data: SoaData },
  records: readonly ResourceRecord[],
  gslb: readonly CompiledGslbRecord[],
  splits?: ReadonlyMap<string, ClientSplit>,
): ZoneData {
  return runSteps(buildZoneSteps(apex, soa, records, gslb, Infinity, splits));
}

/**
 * {@link buildZone} as a generator that yields after every `step` records placed (the sliced
 * compilation of `snapshot.ts`). `splits`: the names `clients` splits, by owner.
 */
export function* buildZoneSteps(
  apex: string,
  soa: ResourceRecord & { data: SoaData },
  records: readonly ResourceRecord[],
  gslb: readonly CompiledGslbRecord[],
  step: number,
  splits?: ReadonlyMap<string, ClientSplit>,
): Steps<ZoneData> {
  let n = 0;
  const nodes = new Map<string, NodeBuilder>();
  const node = (name: string): NodeBuilder => {
    let n = nodes.get(name);
    if (!n) {
      n = { name, rrsets: new Map(), gslb: new Map() };
      nodes.set(name, n);
      if (name !== apex) node(parentName(name));
    }
    return n;
  };
  node(apex).rrsets.set('SOA', [soa]);
  for (const r of records) {
    if (!isInZone(r.name, apex)) continue;
    const rrs = node(r.name).rrsets;
    const list = rrs.get(r.type);
    // An RRset never holds the same record twice (RFC 2181 §5): a record configured twice is kept once.
    if (!list) rrs.set(r.type, [r]);
    else if (!list.some((x) => sameData(r.type, x.data, r.data))) list.push(r);
    if (++n % step === 0) yield;
  }
  for (const g of gslb) {
    if (isInZone(g.name, apex)) node(g.name).gslb.set(g.type, g);
    if (++n % step === 0) yield;
  }
  let hasDelegations = false;
  const finished = new Map<string, ZoneNode>();
  for (const b of nodes.values()) {
    const delegation = b.name !== apex && b.rrsets.has('NS');
    hasDelegations ||= delegation;
    const split = splits?.get(b.name);
    // Shared empty maps for names with no static or no GSLB records (most names of a large
    // configuration have one kind only): a Map per name and kind was 40,000 objects over 20,000 names.
    const rrsets = b.rrsets.size > 0 ? b.rrsets : NO_RRSETS;
    const gslbRecords = b.gslb.size > 0 ? b.gslb : NO_GSLB;
    finished.set(b.name, { name: b.name, rrsets, gslb: gslbRecords, delegation, ...(split ? { split } : {}) });
    // One node per name: 20,000 records are 20,000 nodes, so this pass yields too (issue 17).
    if (++n % step === 0) yield;
  }
  const negativeTtl = Math.min(soa.ttl, soa.data.minimum);
  return { name: apex, soa, negativeTtl, nodes: finished, hasDelegations };
}

/**
 * Whether two records of `type` carry the same data: parsed data holds names in canonical form,
 * addresses as written (`2001:db8::1` and `2001:db8:0::1` are one address).
 */
function sameData(type: RecordType, a: ResourceRecord['data'], b: ResourceRecord['data']): boolean {
  if (a === b) return true;
  if (type === 'A' || type === 'AAAA') return canonicalIpText(a as string) === canonicalIpText(b as string);
  return JSON.stringify(a) === JSON.stringify(b);
}
