import type { StoredProbeResult } from '../../core/contracts/probeResultsMap.js';
import { formatIp, maskAddress, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { clientNetworkKey } from '../../core/views/metricView.js';
import type { ZoneRtt } from '../../core/views/proximityView.js';
import type { Tolerance, ZoneTree } from './zoneTree.js';

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

/** A PDB key: {@link clientNetworkKey} of the network (a number for IPv4 and short IPv6 networks, else a string). */
export type PdbKey = number | string;

/** Sample times are kept as unsigned 32-bit ms offsets from a base this far before the first sample (≥ the 1-day maximum sample age). */
const BASE_LEAD_MS = 2 * 86_400_000;
const MAX_OFFSET = 0xffff_ffff;
const NONE = -1;

/**
 * The proximity database (docs/PRODUCT.md §2, §5; seed 000's PDB): per client network, the RTT
 * from each proximity zone — the median of the recent probe results of each group measuring for
 * it (agents of the zone, or of a data center in it) — and the ordered zone index derived from
 * them at lookup. Fed off the query path from the agents' probe results (`agents.probeResults`,
 * written by the agent API into the state store: a shared store shares those, and every engine
 * derives the same PDB from them). Bounded: networks whose newest sample is older than
 * `sampleMaxAgeMs` are swept, and beyond `maxNetworks` the least recently updated go first.
 *
 * Memory (README.md, "Memory"): no object per network. A network is one entry of a `Map` from its
 * numeric key to a slot, plus per slot a list head and an update time in typed arrays; each group
 * that measured it is one record of a pool of typed arrays (`samples` RTTs as float32, `samples`
 * receive times as uint32 ms offsets, a count, the group, the next record). With 4 groups and 3
 * samples: 193 bytes per network with its `Map` entry (the `proximity` benchmark group measures it).
 */
export class ProximityDatabase {
  private settings: PdbSettings | undefined;
  readonly counts: PdbCounts = { ingested: 0, ignored: 0 };
  /** Network key → slot; the map's order is update order (the bound drops the first). */
  private readonly slots = new Map<PdbKey, number>();
  private freeSlots: number[] = [];
  private slotHead = new Int32Array(0);
  private slotUpdated = new Uint32Array(0);
  /** Group records: `stride` = samples; count, group index and next record per record. */
  private stride = 3;
  private recRtt = new Float32Array(0);
  private recAt = new Uint32Array(0);
  private recCount = new Uint8Array(0);
  private recGroup = new Uint16Array(0);
  private recNext = new Int32Array(0);
  private freeRecs: number[] = [];
  private recTop = 0;
  private slotTop = 0;
  private baseMs: number | undefined;
  /** Group index → group name and zone, for the running settings. */
  private groupIndex = new Map<string, number>();
  /** Group index → its zone's position in the tree and each configured ancestor's, nearest first (empty: a zone not in the tree). */
  private groupChain: Int32Array[] = [];
  /** Zone position → its own and its ancestors' positions, nearest first. */
  private zoneChain: Int32Array[] = [];
  /** The tree's fallback order as positions. */
  private fallbackPositions = new Int32Array(0);
  /** Per-lookup scratch, by zone position: own RTT, effective RTT (∞: none), newest sample time. */
  private ownRtt = new Float64Array(0);
  private effRtt = new Float64Array(0);
  private newestAt = new Float64Array(0);
  /** Per-lookup scratch: zone positions in first-seen order (own, then effective), the sort buffer, one group's fresh samples. */
  private ownSeen = new Int32Array(0);
  private effSeen = new Int32Array(0);
  private sorted = new Int32Array(0);
  private fresh = new Float64Array(0);
  private readonly lengths = { ipv4: 24, ipv6: 56 };

  /** Client networks held now. */
  get size(): number {
    return this.slots.size;
  }

  /** Bytes of the typed arrays behind the entries (what grows with networks, besides the key map). */
  get arrayBytes(): number {
    return (
      this.slotHead.byteLength +
      this.slotUpdated.byteLength +
      this.recRtt.byteLength +
      this.recAt.byteLength +
      this.recCount.byteLength +
      this.recGroup.byteLength +
      this.recNext.byteLength
    );
  }

  /** The settings of the running configuration; the caller clears and rebuilds the entries when the keys or groups changed. */
  configure(settings: PdbSettings): void {
    this.settings = settings;
    this.lengths.ipv4 = settings.ipv4Prefix;
    this.lengths.ipv6 = settings.ipv6Prefix;
    const names = [...settings.groupZones.keys()];
    if (names.join() !== [...this.groupIndex.keys()].join() || settings.samples !== this.stride) {
      // Group indexes and the record stride are baked into the arrays: start empty.
      this.groupIndex = new Map(names.map((g, i) => [g, i]));
      this.stride = settings.samples;
      this.reset();
    }
    const tree = settings.tree;
    const chainOf = (zone: string): Int32Array => Int32Array.from(tree.selfAndAncestors(zone), (z) => tree.positionOf(z));
    this.groupChain = names.map((g) => {
      const zone = settings.groupZones.get(g)!;
      return tree.has(zone) ? chainOf(zone) : new Int32Array(0);
    });
    this.zoneChain = tree.ids.map(chainOf);
    this.fallbackPositions = Int32Array.from(tree.fallbackOrder, (z) => tree.positionOf(z));
    const n = tree.ids.length;
    this.ownRtt = new Float64Array(n);
    this.effRtt = new Float64Array(n);
    this.newestAt = new Float64Array(n);
    this.ownSeen = new Int32Array(n);
    this.effSeen = new Int32Array(n);
    this.sorted = new Int32Array(n);
    this.fresh = new Float64Array(Math.max(1, settings.samples));
  }

  /** The PDB key of an address at the configured length of its family, or at `prefix` when given and different (a string then). */
  keyOf(address: IpAddress, prefix?: number): PdbKey {
    const own = address.family === 4 ? this.lengths.ipv4 : this.lengths.ipv6;
    if (prefix === undefined || prefix === own) return clientNetworkKey(address, this.lengths);
    return this.networkOf(address, prefix);
  }

  /** The network's text: `address/len`, masked to `prefix` (or the configured length of its family). */
  networkOf(address: IpAddress, prefix?: number): string {
    const len = prefix ?? (address.family === 4 ? this.lengths.ipv4 : this.lengths.ipv6);
    return `${formatIp(maskAddress(address, len))}/${len}`;
  }

  /** Drops every entry (the zone tree or the key lengths changed: the old keys and orders mean nothing now). */
  clear(): void {
    this.reset();
  }

  /** Takes one probe result in (off the query path): a sample for its group's zone toward its target's network. */
  ingest(r: StoredProbeResult): void {
    const s = this.settings;
    const g = this.groupIndex.get(r.group);
    if (s === undefined || g === undefined || r.received === 0 || r.rttMedianMs === undefined) {
      this.counts.ignored++;
      return;
    }
    const key = this.keyOf(parseIp(r.target));
    const at = this.offsetOf(r.atMs);
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = this.newSlot();
      this.slotHead[slot] = NONE;
      this.slotUpdated[slot] = 0;
    } else {
      // Removed first so the map's order is update order: the bound drops the least recently updated.
      this.slots.delete(key);
    }
    this.slots.set(key, slot);
    let rec = this.slotHead[slot]!;
    while (rec !== NONE && this.recGroup[rec] !== g) rec = this.recNext[rec]!;
    if (rec === NONE) {
      rec = this.newRecord();
      this.recGroup[rec] = g;
      this.recCount[rec] = 0;
      this.recNext[rec] = this.slotHead[slot]!;
      this.slotHead[slot] = rec;
    }
    const base = rec * this.stride;
    const n = this.recCount[rec]!;
    // The same result seen twice (a re-read after a reload) is one sample.
    if (n > 0 && this.recAt[base + n - 1] === at) return;
    if (n < this.stride) {
      this.recRtt[base + n] = r.rttMedianMs;
      this.recAt[base + n] = at;
      this.recCount[rec] = n + 1;
    } else {
      this.recRtt.copyWithin(base, base + 1, base + n);
      this.recAt.copyWithin(base, base + 1, base + n);
      this.recRtt[base + n - 1] = r.rttMedianMs;
      this.recAt[base + n - 1] = at;
    }
    if (at > this.slotUpdated[slot]!) this.slotUpdated[slot] = at;
    this.counts.ingested++;
    if (this.slots.size > s.maxNetworks) this.trimTo(s.maxNetworks);
  }

  /** The RTT samples (ms, oldest first) one group has toward a network (tests and tools). */
  samplesOf(key: PdbKey, group: string): number[] {
    const slot = this.slots.get(key);
    const g = this.groupIndex.get(group);
    if (slot === undefined || g === undefined) return [];
    for (let rec = this.slotHead[slot]!; rec !== NONE; rec = this.recNext[rec]!) {
      if (this.recGroup[rec] === g) return [...this.recRtt.subarray(rec * this.stride, rec * this.stride + this.recCount[rec]!)];
    }
    return [];
  }

  /**
   * The ordered zone index of the network `key` at `nowMs`, with the RTT and age per measured zone,
   * or undefined when the PDB has no sample younger than `sampleMaxAgeMs` for it. Reads only.
   */
  lookup(key: PdbKey, nowMs: number): PdbAnswer | undefined {
    const s = this.settings;
    const slot = this.slots.get(key);
    if (s === undefined || slot === undefined || this.baseMs === undefined) return undefined;
    const now = nowMs - this.baseMs;
    if (now - this.slotUpdated[slot]! > s.sampleMaxAgeMs) return undefined;
    // Typed scratch by zone position instead of maps of zone ids: a lookup is a query's cost on an index cache miss.
    const own = this.ownRtt;
    const eff = this.effRtt;
    const newest = this.newestAt;
    const fresh = this.fresh;
    own.fill(Infinity);
    eff.fill(Infinity);
    newest.fill(0);
    // Each zone's own RTT: the minimum over its groups of the median of their fresh samples.
    let owned = 0;
    for (let rec = this.slotHead[slot]!; rec !== NONE; rec = this.recNext[rec]!) {
      const chain = this.groupChain[this.recGroup[rec]!]!;
      if (chain.length === 0) continue;
      let k = 0;
      let last = 0;
      const base = rec * this.stride;
      for (let i = 0; i < this.recCount[rec]!; i++) {
        const at = this.recAt[base + i]!;
        if (now - at > s.sampleMaxAgeMs) continue;
        // Insertion into the sorted fresh samples (a handful: `samples`).
        const v = this.recRtt[base + i]!;
        let j = k++;
        while (j > 0 && fresh[j - 1]! > v) fresh[j] = fresh[--j]!;
        fresh[j] = v;
        if (at > last) last = at;
      }
      if (k === 0) continue;
      const mid = k >> 1;
      // float32 samples: rounded to µs so the index and /explain show the RTTs as reported.
      const m = Math.round((k % 2 === 1 ? fresh[mid]! : (fresh[mid - 1]! + fresh[mid]!) / 2) * 1000) / 1000;
      const zone = chain[0]!;
      if (own[zone] === Infinity) this.ownSeen[owned++] = zone;
      if (m < own[zone]!) own[zone] = m;
      for (let c = 0; c < chain.length; c++) if (last > newest[chain[c]!]!) newest[chain[c]!] = last;
    }
    if (owned === 0) return undefined;
    // A zone's RTT in the index: the minimum over its own and its descendants' (zoneTree.ts#orderZones, the same order of first sight).
    let measured = 0;
    for (let i = 0; i < owned; i++) {
      const zone = this.ownSeen[i]!;
      const rtt = own[zone]!;
      const chain = this.zoneChain[zone]!;
      for (let c = 0; c < chain.length; c++) {
        const z = chain[c]!;
        if (eff[z] === Infinity) this.effSeen[measured++] = z;
        if (rtt < eff[z]!) eff[z] = rtt;
      }
    }
    const ids = s.tree.ids;
    const byRtt = this.sorted;
    for (let i = 0; i < measured; i++) {
      // By RTT, then configuration order.
      const z = this.effSeen[i]!;
      let j = i;
      while (j > 0 && (eff[byRtt[j - 1]!]! > eff[z]! || (eff[byRtt[j - 1]!] === eff[z] && byRtt[j - 1]! > z))) byRtt[j] = byRtt[--j]!;
      byRtt[j] = z;
    }
    const order: string[] = [];
    for (let i = 0; i < measured;) {
      const best = eff[byRtt[i]!]!;
      const limit = best + Math.max(s.tolerance.ms, (best * s.tolerance.percent) / 100);
      let j = i;
      while (j < measured && eff[byRtt[j]!]! <= limit) j++;
      // Inside a band, configuration order.
      const band = byRtt.subarray(i, j).sort();
      for (let b = 0; b < band.length; b++) order.push(ids[band[b]!]!);
      i = j;
    }
    for (let i = 0; i < this.fallbackPositions.length; i++) {
      const z = this.fallbackPositions[i]!;
      if (eff[z] === Infinity) order.push(ids[z]!);
    }
    const rtts: ZoneRtt[] = [];
    for (let i = 0; i < measured; i++) {
      const z = this.effSeen[i]!;
      rtts.push({ zone: ids[z]!, rttMs: eff[z]!, ageMs: Math.max(0, now - newest[z]!) });
    }
    return { order, rtts };
  }

  /** Drops networks with no sample younger than `sampleMaxAgeMs` at `nowMs`; returns how many went. */
  sweep(nowMs: number): number {
    const s = this.settings;
    if (s === undefined || this.baseMs === undefined) return 0;
    const now = nowMs - this.baseMs;
    const old: PdbKey[] = [];
    for (const [key, slot] of this.slots) if (now - this.slotUpdated[slot]! > s.sampleMaxAgeMs) old.push(key);
    for (const key of old) this.drop(key);
    return old.length;
  }

  private trimTo(max: number): void {
    while (this.slots.size > max) this.drop(this.slots.keys().next().value!);
  }

  private drop(key: PdbKey): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    for (let rec = this.slotHead[slot]!; rec !== NONE; rec = this.recNext[rec]!) this.freeRecs.push(rec);
    this.freeSlots.push(slot);
  }

  private reset(): void {
    this.slots.clear();
    this.freeSlots = [];
    this.freeRecs = [];
    this.slotTop = 0;
    this.recTop = 0;
    this.slotHead = new Int32Array(0);
    this.slotUpdated = new Uint32Array(0);
    this.recRtt = new Float32Array(0);
    this.recAt = new Uint32Array(0);
    this.recCount = new Uint8Array(0);
    this.recGroup = new Uint16Array(0);
    this.recNext = new Int32Array(0);
    this.baseMs = undefined;
  }

  /** `atMs` as an offset from the base; the base moves forward (and every kept time with it) before an offset would overflow. */
  private offsetOf(atMs: number): number {
    this.baseMs ??= atMs - BASE_LEAD_MS;
    if (atMs - this.baseMs > MAX_OFFSET) {
      const shift = atMs - BASE_LEAD_MS - this.baseMs;
      // Times pushed below the new base are older than the longest sample age: 0 keeps them expired.
      for (let i = 0; i < this.recTop * this.stride; i++) this.recAt[i] = Math.max(0, this.recAt[i]! - shift);
      for (let i = 0; i < this.slotTop; i++) this.slotUpdated[i] = Math.max(0, this.slotUpdated[i]! - shift);
      this.baseMs += shift;
    }
    return Math.max(0, Math.round(atMs - this.baseMs));
  }

  private newSlot(): number {
    const free = this.freeSlots.pop();
    if (free !== undefined) return free;
    if (this.slotTop === this.slotHead.length) {
      const cap = Math.max(1024, this.slotHead.length * 2);
      this.slotHead = grow(this.slotHead, new Int32Array(cap));
      this.slotUpdated = grow(this.slotUpdated, new Uint32Array(cap));
    }
    return this.slotTop++;
  }

  private newRecord(): number {
    const free = this.freeRecs.pop();
    if (free !== undefined) return free;
    if (this.recTop === this.recNext.length) {
      const cap = Math.max(1024, this.recNext.length * 2);
      this.recRtt = grow(this.recRtt, new Float32Array(cap * this.stride));
      this.recAt = grow(this.recAt, new Uint32Array(cap * this.stride));
      this.recCount = grow(this.recCount, new Uint8Array(cap));
      this.recGroup = grow(this.recGroup, new Uint16Array(cap));
      this.recNext = grow(this.recNext, new Int32Array(cap));
    }
    return this.recTop++;
  }
}

function grow<T extends Float32Array | Uint32Array | Int32Array | Uint16Array | Uint8Array>(old: T, next: T): T {
  next.set(old as never);
  return next;
}
