import type { RecordType } from '../../core/dns/records.js';
import type { Client, DelegationHop } from '../../core/model/query.js';
import { maskAddress, type IpAddress, type IpPrefix } from '../../core/net/ipAddress.js';
import type { LocationDb } from '../../core/location/locationDb.js';
import { unpackId } from '../../core/lpm/rangeTable.js';
import { commonPrefixLength } from '../../core/net/subnet.js';
import type { ProbeDemand } from '../../core/views/probeDemand.js';
import type { DelegatedAnswer, DelegationRequest, DelegationTrace, ProximityView, ZoneIndexReading } from '../../core/views/proximityView.js';
import type { PdbKey, ProximityDatabase } from './proximityDatabase.js';
import type { SubTierHealth } from './subTierHealth.js';
import type { SubTierNameServer, SubTierResolver } from './subTierResolver.js';
import type { ZoneIndexCache } from './zoneIndexCache.js';
import type { ZoneTree } from './zoneTree.js';

/** What the index reads of the `networkProximity` section. */
export interface IndexSettings {
  readonly tree: ZoneTree;
  /** False when `pdb: disabled` (later also when a shared store holding the PDB is cut off). */
  readonly pdbAvailable: boolean;
  readonly ecs: boolean;
  readonly ipv4Prefix: number;
  readonly ipv6Prefix: number;
  readonly anycastResolvers: readonly IpPrefix[];
  /** Each delegated zone's name servers (recursive delegation). */
  readonly nameServers: ReadonlyMap<string, readonly SubTierNameServer[]>;
}

/** Lookups by where their index came from (Prometheus `gslbd_proximity_index_lookups_total{source}`). */
export interface IndexCounts {
  cache: number;
  pdb_measured: number;
  pdb_fallback: number;
  round_robin: number;
}

/** Static orders kept per location database at most (then it starts afresh). */
const STATIC_ORDERS_KEPT = 65_536;

const ROUND_ROBIN: ZoneIndexReading = Object.freeze({
  source: 'round-robin',
  measured: false,
  order: Object.freeze([]),
  network: '',
  clientPrefix: undefined,
  rtts: Object.freeze([]),
}) as ZoneIndexReading;

/**
 * The ordered zone index per query, exactly the seed's step 5 (docs/PRODUCT.md §5):
 * a. the engine's ordered zone index cache, per client network, for `indexTtlSeconds`;
 * b. else the PDB, which answers at once — its measured order, or the fallback order for a network
 *    it has not measured — and a probe request for the network is queued (answer now, probe
 *    later: the agents' probe-request queue, `SelectionEnv.probes`);
 * c. else, when the PDB is unavailable, round-robin (the stage ranks every live DC alike).
 *
 * The client network (the PDB key) is the resolver's address masked to `ipv4Prefix`/`ipv6Prefix`
 * (the path the agents probe, as the seed's probes go to the client's DNS server), or the ECS
 * network with `ecs: true`; for a resolver in `anycastResolvers` (whose RTT says nothing about its
 * clients) the ECS network, or the fallback order when the query has none.
 */
export class ProximityIndex implements ProximityView {
  constructor(
    private readonly settings: IndexSettings,
    private readonly pdb: ProximityDatabase,
    private readonly cache: ZoneIndexCache,
    /** Lookups by source, shared by the indexes of successive configurations. */
    readonly counts: IndexCounts,
    /** The keepalive of delegated zones (absent: every zone is up). */
    private readonly subTiers?: SubTierHealth,
    /** Recursive delegation to the delegated zones' name servers (absent: never answered, the next zone's answer stands). */
    private readonly resolver?: SubTierResolver,
    private readonly now: () => number = Date.now,
  ) {}

  zoneUp(zone: string): boolean {
    return this.subTiers?.isUp(zone) ?? true;
  }

  delegate(
    request: DelegationRequest,
    name: string,
    type: RecordType,
    client: Client,
    hop: DelegationHop | undefined,
    trace?: DelegationTrace,
  ): Promise<DelegatedAnswer | 'refused' | undefined> {
    if (this.resolver === undefined) return Promise.resolve(undefined);
    return this.resolver.delegate(request, this.settings.nameServers, name, type, client, hop, this.now(), trace);
  }

  /** The reading a cache hit returned last: most hits share the few orders of a deployment. */
  private lastReading: ZoneIndexReading | undefined;
  /** Cached readings by interned order (the cache's orders), then by scope and measured flag. */
  private readonly readings = new WeakMap<readonly string[], ZoneIndexReading[]>();

  cachedIndex(client: Client, nowMs: number, count: boolean): ZoneIndexReading | undefined {
    const key = this.networkOf(client);
    const slot = this.cache.peek(key, nowMs, count);
    if (slot < 0) return undefined;
    if (count) this.counts.cache++;
    return this.interned(this.cache.orderAt(slot), this.cache.measuredAt(slot), this.clientPrefix);
  }

  /** Set by {@link networkOf}: the address and prefix the PDB key is of, the decision's scope bound, whether only the static fallback may order it. */
  private address: IpAddress | undefined;
  private prefix = 0;
  private clientPrefix: number | undefined;
  private staticOnly = false;

  /**
   * The PDB key of `client`'s network (README.md, "Per query", 1); sets {@link address},
   * {@link prefix}, {@link clientPrefix} and {@link staticOnly} (fields, so the query path
   * allocates nothing).
   */
  private networkOf(client: Client): PdbKey {
    const st = this.settings;
    const resolver = client.fromEcs ? client.resolver : client.address;
    const anycast = st.anycastResolvers.length > 0 && resolver !== undefined && this.inAnycast(resolver);
    // Which address the decision is keyed on, and whether that is the client's own (ECS or, without ECS, the resolver).
    let address: IpAddress;
    let prefix: number;
    let ofClient: boolean;
    let staticOnly = false;
    if (client.fromEcs && (st.ecs || anycast || resolver === undefined)) {
      address = client.address;
      prefix = Math.min(client.sourcePrefix, client.address.family === 4 ? st.ipv4Prefix : st.ipv6Prefix);
      ofClient = true;
    } else {
      address = resolver!;
      prefix = address.family === 4 ? st.ipv4Prefix : st.ipv6Prefix;
      ofClient = !client.fromEcs;
      staticOnly = anycast;
    }
    this.address = address;
    this.prefix = prefix;
    this.staticOnly = staticOnly;
    // The decision is constant over the network, unless an anycast prefix inside it splits it.
    this.clientPrefix = !ofClient ? undefined : st.anycastResolvers.length === 0 ? prefix : Math.max(prefix, this.anycastSplit(address, prefix));
    return this.pdb.keyOf(address, prefix);
  }

  zoneIndex(client: Client, nowMs: number, probes: ProbeDemand | undefined, record: boolean, geo?: LocationDb): ZoneIndexReading {
    const st = this.settings;
    const key = this.networkOf(client);
    const address = this.address!;
    const prefix = this.prefix;
    const clientPrefix = this.clientPrefix;
    const staticOnly = this.staticOnly;

    const slot = this.cache.get(key, nowMs, record);
    if (slot >= 0) {
      if (!record) return this.explained('cache', this.cache.measuredAt(slot), this.cache.orderAt(slot), address, prefix, clientPrefix, key, nowMs);
      this.counts.cache++;
      return this.interned(this.cache.orderAt(slot), this.cache.measuredAt(slot), clientPrefix);
    }
    if (!st.pdbAvailable) {
      if (record) this.counts.round_robin++;
      // Round-robin does not depend on the client: no scope.
      return ROUND_ROBIN;
    }
    const answer = staticOnly ? undefined : this.pdb.lookup(key, nowMs);
    const measured = answer !== undefined;
    const located = measured ? undefined : this.staticOrder(address, prefix, geo);
    let order = answer?.order ?? located ?? st.tree.fallbackOrder;
    if (record) {
      if (measured) this.counts.pdb_measured++;
      else this.counts.pdb_fallback++;
      order = this.cache.set(key, order, measured, nowMs);
      // Answer now, probe later: the agents dedupe a network measured recently.
      if (!staticOnly) probes?.note(client, nowMs);
    }
    const reading: ZoneIndexReading = { source: 'pdb', measured, order, network: this.pdb.networkOf(address, prefix), clientPrefix, rtts: answer?.rtts ?? [] };
    return measured ? reading : { ...reading, fallback: located !== undefined ? 'static-proximity' : 'default-order' };
  }

  /** Static orders by location id, for {@link staticOrderGeo}. */
  private readonly staticOrders = new Map<number, readonly string[] | undefined>();
  private staticOrderGeo: LocationDb | undefined;

  /**
   * The fallback order by static proximity for the network `address`/`prefix` (issue 20: the PDB's
   * fallback is static proximity by location, else the configured default order): zones by
   * distance from the network's location, when `geo` knows its coordinates and some zone has
   * coordinates; undefined otherwise. One order per location, kept until `geo` changes.
   */
  private staticOrder(address: IpAddress, prefix: number, geo: LocationDb | undefined): readonly string[] | undefined {
    const tree = this.settings.tree;
    if (!tree.located || geo === undefined) return undefined;
    if (geo !== this.staticOrderGeo) {
      this.staticOrders.clear();
      this.staticOrderGeo = geo;
    }
    // The network's address: every client of the network gets the order its index is cached with.
    const id = unpackId(geo.lookup(maskAddress(address, prefix)));
    if (id === 0) return undefined;
    if (this.staticOrders.has(id)) return this.staticOrders.get(id);
    const { lat, lon } = geo.location(id);
    const order = lat === undefined || lon === undefined ? undefined : tree.staticOrder(lat, lon);
    if (this.staticOrders.size >= STATIC_ORDERS_KEPT) this.staticOrders.clear();
    this.staticOrders.set(id, order);
    return order;
  }

  /**
   * The reading a query gets from the cache: one frozen object per (order, measured, scope), so a
   * hit allocates nothing. Its network and RTTs are left out: only `/explain` shows them.
   */
  private interned(order: readonly string[], measured: boolean, clientPrefix: number | undefined): ZoneIndexReading {
    const last = this.lastReading;
    if (last !== undefined && last.order === order && last.measured === measured && last.clientPrefix === clientPrefix) return last;
    let byOrder = this.readings.get(order);
    if (byOrder === undefined) {
      byOrder = [];
      this.readings.set(order, byOrder);
    }
    const i = (clientPrefix ?? 129) * 2 + (measured ? 1 : 0);
    return (this.lastReading = byOrder[i] ??= Object.freeze({ source: 'cache', measured, order, network: '', clientPrefix, rtts: [] }) as ZoneIndexReading);
  }

  /** The full reading `/explain` shows for a cached index: the network, and the RTTs the PDB holds now. */
  private explained(
    source: 'cache',
    measured: boolean,
    order: readonly string[],
    address: IpAddress,
    prefix: number,
    clientPrefix: number | undefined,
    key: PdbKey,
    nowMs: number,
  ): ZoneIndexReading {
    return {
      source,
      measured,
      order,
      network: this.pdb.networkOf(address, prefix),
      clientPrefix,
      rtts: measured ? (this.pdb.lookup(key, nowMs)?.rtts ?? []) : [],
    };
  }

  private inAnycast(a: IpAddress): boolean {
    for (const p of this.settings.anycastResolvers) if (p.address.family === a.family && commonPrefixLength(a, p.address) >= p.prefix) return true;
    return false;
  }

  /** The longest anycast prefix that lies inside the /`prefix` block of `a` and holds `a`'s block side (0 when none). */
  private anycastSplit(a: IpAddress, prefix: number): number {
    let longest = 0;
    for (const p of this.settings.anycastResolvers) {
      if (p.address.family !== a.family || p.prefix <= prefix) continue;
      if (commonPrefixLength(a, p.address) >= prefix) longest = Math.max(longest, Math.min(p.prefix, commonPrefixLength(a, p.address) + 1));
    }
    return longest;
  }
}
