import type { StoredProbeResult } from '../../core/contracts/probeResultsMap.js';
import type { StateMap, StateStore } from '../../core/contracts/stateStore.js';
import { formatIp, maskAddress, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import type { ZoneRtt } from '../../core/views/proximityView.js';
import { orderZones, type Tolerance, type ZoneTree } from './zoneTree.js';

/** The state-store map of the proximity database: client network → {@link PdbEntry}. */
export const PDB_MAP = 'proximity.pdb';

/** One consumer group's recent samples toward a network (parallel arrays, oldest first). */
export interface PdbGroupSamples {
  /** The proximity zone the group measures for (a zone agent's zone, or its data center's zone). */
  readonly zone: string;
  /** Median RTTs of probe trains (ms). */
  readonly rttMs: readonly number[];
  /** When the engine received each (ms since the epoch). */
  readonly atMs: readonly number[];
}

/**
 * One client network in the PDB (plain JSON, so a shared store can carry it): the recent samples of
 * every group that measured it, and the ordered zone index derived from them when they arrived.
 * Size: about 120 bytes of keys and numbers per group with 3 samples, plus the order (a few
 * dozen bytes), in a JavaScript object of a few hundred bytes in all (README.md, "Memory").
 */
export interface PdbEntry {
  readonly groups: Readonly<Record<string, PdbGroupSamples>>;
  /** Zone ids best first, measured ones by RTT (docs/PRODUCT.md §5), then the rest in fallback order. */
  readonly order: readonly string[];
  /** The newest sample's receive time (ms): the entry expires `sampleMaxAgeSeconds` after it. */
  readonly updatedAtMs: number;
}

/** What the PDB answers for a network it has measurements of. */
export interface PdbAnswer {
  readonly order: readonly string[];
  readonly rtts: readonly ZoneRtt[];
}

/** The settings the PDB runs with (from the `networkProximity` section). */
export interface PdbSettings {
  readonly tree: ZoneTree;
  /** Consumer group (`zone:<id>`, `dc:<name>`) → the proximity zone it measures for. */
  readonly groupZones: ReadonlyMap<string, string>;
  readonly tolerance: Tolerance;
  readonly samples: number;
  readonly sampleMaxAgeMs: number;
  readonly maxNetworks: number;
  readonly ipv4Prefix: number;
  readonly ipv6Prefix: number;
}

/** Counts for Prometheus. */
export interface PdbCounts {
  /** Probe results taken in. */
  ingested: number;
  /** Probe results ignored: no reply (nothing timed), or a group of no configured zone. */
  ignored: number;
}

/**
 * The proximity database (docs/PRODUCT.md §2, §5; seed 000's PDB): per client network, the RTT
 * from each proximity zone — the median of the recent probe results of each group measuring for
 * it (agents of the zone, or of a data center in it) — and the ordered zone index derived from
 * them. Fed off the query path from the agents' probe results (`agents.probeResults`, written by
 * the agent API); kept in the state store's map {@link PDB_MAP} so a shared store can share it.
 * Bounded: networks whose newest sample is older than `sampleMaxAgeMs` are swept, and beyond
 * `maxNetworks` the least recently updated go first.
 */
export class ProximityDatabase {
  private readonly map: StateMap<PdbEntry>;
  private settings: PdbSettings | undefined;
  readonly counts: PdbCounts = { ingested: 0, ignored: 0 };

  constructor(store: StateStore) {
    this.map = store.map<PdbEntry>(PDB_MAP);
  }

  /** Client networks held now. */
  get size(): number {
    return this.map.size;
  }

  /** The settings of the running configuration; the key lengths and zones may change, so the entries are rebuilt by the caller. */
  configure(settings: PdbSettings): void {
    this.settings = settings;
  }

  /** The PDB key of an address: `address/len`, masked to `prefix` (or the configured length of its family). */
  networkOf(address: IpAddress, prefix?: number): string {
    const s = this.settings;
    const len = prefix ?? (address.family === 4 ? (s?.ipv4Prefix ?? 24) : (s?.ipv6Prefix ?? 56));
    return `${formatIp(maskAddress(address, len))}/${len}`;
  }

  /** Drops every entry (the zone tree or the key lengths changed: the old keys and orders mean nothing now). */
  clear(): void {
    for (const key of [...this.map.entries()].map(([k]) => k)) this.map.delete(key);
  }

  /** Takes one probe result in (off the query path): a sample for its group's zone toward its target's network. */
  ingest(r: StoredProbeResult): void {
    const s = this.settings;
    const zone = s?.groupZones.get(r.group);
    if (s === undefined || zone === undefined || r.received === 0 || r.rttMedianMs === undefined) {
      this.counts.ignored++;
      return;
    }
    const network = this.networkOf(parseIp(r.target));
    const old = this.map.get(network);
    const was = old?.groups[r.group];
    // The same result seen twice (a re-read after a reload) is one sample.
    if (was !== undefined && was.atMs[was.atMs.length - 1] === r.atMs) return;
    const keep = s.samples;
    const samples: PdbGroupSamples = {
      zone,
      rttMs: [...(was?.rttMs ?? []), r.rttMedianMs].slice(-keep),
      atMs: [...(was?.atMs ?? []), r.atMs].slice(-keep),
    };
    const groups = { ...old?.groups, [r.group]: samples };
    const updatedAtMs = Math.max(r.atMs, old?.updatedAtMs ?? 0);
    const { order } = derive(s, groups, updatedAtMs);
    // Removed first so the map's order is update order: the bound drops the least recently updated.
    this.map.delete(network);
    this.map.set(network, { groups, order, updatedAtMs });
    this.counts.ingested++;
    if (this.map.size > s.maxNetworks) this.trimTo(s.maxNetworks);
  }

  /**
   * The ordered zone index of `network` at `nowMs`, with the RTT and age per measured zone, or
   * undefined when the PDB has no sample younger than `sampleMaxAgeMs` for it. Reads only.
   */
  lookup(network: string, nowMs: number): PdbAnswer | undefined {
    const s = this.settings;
    const e = this.map.get(network);
    if (s === undefined || e === undefined || nowMs - e.updatedAtMs > s.sampleMaxAgeMs) return undefined;
    const { order, rtts, newest } = derive(s, e.groups, nowMs);
    if (rtts.size === 0) return undefined;
    return {
      order,
      rtts: [...rtts].map(([zone, rttMs]) => ({ zone, rttMs, ageMs: Math.max(0, nowMs - (newest.get(zone) ?? nowMs)) })),
    };
  }

  /** Drops networks with no sample younger than `sampleMaxAgeMs` at `nowMs`; returns how many went. */
  sweep(nowMs: number): number {
    const s = this.settings;
    if (s === undefined) return 0;
    const old: string[] = [];
    for (const [key, e] of this.map.entries()) if (nowMs - e.updatedAtMs > s.sampleMaxAgeMs) old.push(key);
    for (const key of old) this.map.delete(key);
    return old.length;
  }

  private trimTo(max: number): void {
    const excess: string[] = [];
    for (const [key] of this.map.entries()) {
      if (excess.length >= this.map.size - max) break;
      excess.push(key);
    }
    for (const key of excess) this.map.delete(key);
  }
}

/**
 * Each zone's own RTT — the minimum over its groups of the median of their samples younger than
 * `sampleMaxAgeMs` at `nowMs` — and the ordered zone index from them (`zoneTree.ts#orderZones`).
 */
function derive(
  s: PdbSettings,
  groups: Readonly<Record<string, PdbGroupSamples>>,
  nowMs: number,
): { order: string[]; rtts: Map<string, number>; newest: Map<string, number> } {
  const own = new Map<string, number>();
  const newest = new Map<string, number>();
  for (const g of Object.values(groups)) {
    if (!s.tree.has(g.zone)) continue;
    const fresh: number[] = [];
    let last = 0;
    for (let i = 0; i < g.rttMs.length; i++) {
      if (nowMs - g.atMs[i]! > s.sampleMaxAgeMs) continue;
      fresh.push(g.rttMs[i]!);
      last = Math.max(last, g.atMs[i]!);
    }
    if (fresh.length === 0) continue;
    const m = median(fresh);
    const was = own.get(g.zone);
    if (was === undefined || m < was) own.set(g.zone, m);
    for (const z of s.tree.selfAndAncestors(g.zone)) newest.set(z, Math.max(newest.get(z) ?? 0, last));
  }
  const { order, rtts } = orderZones(s.tree, own, s.tolerance);
  return { order, rtts, newest };
}

/** The median of a non-empty list (the mean of the two middle values for an even count). */
function median(values: number[]): number {
  values.sort((a, b) => a - b);
  const mid = values.length >> 1;
  return values.length % 2 === 1 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}
