import { distanceKm } from '../../core/location/location.js';

/**
 * The proximity zone tree (docs/PRODUCT.md §5; seed 000's tiers: zone 0 = U.S. with sub-zones
 * 0.1 East Coast and 0.2 West Coast, zone 1 = Europe): ids in configuration order, each zone's
 * parent (its id without the last number), and the order given when nothing is measured.
 */
export class ZoneTree {
  /** Zone ids in configuration order. */
  readonly ids: readonly string[];
  /** The fallback order: the configured `defaultOrder`, then every other zone in configuration order. */
  readonly fallbackOrder: readonly string[];
  /** True when some zone has coordinates: the fallback order is then by static proximity where the client's location is known. */
  readonly located: boolean;
  private readonly position: ReadonlyMap<string, number>;
  /** Per zone, the coordinates of its sites and its descendants' (degrees). */
  private readonly sites = new Map<string, ZoneSite[]>();

  /**
   * @param sites where zones stand: a zone's own coordinates (`zones[].lat/lon`) and its data
   *   centers' (`datacenters[].lat/lon`); each counts for its zone and the zone's ancestors.
   */
  constructor(ids: readonly string[], defaultOrder: readonly string[] = [], sites: readonly ZoneSite[] = []) {
    this.ids = ids;
    this.position = new Map(ids.map((id, i) => [id, i]));
    const first = defaultOrder.filter((z) => this.position.has(z));
    this.fallbackOrder = [...new Set([...first, ...ids])];
    for (const site of sites) for (const z of this.selfAndAncestors(site.zone)) (this.sites.get(z) ?? this.sites.set(z, []).get(z)!).push(site);
    this.located = this.sites.size > 0;
  }

  /**
   * The fallback order by static proximity (issue 20, seed 000 step 5b: the PDB's order for a
   * network it has not measured): the zones with coordinates by the great-circle distance from
   * (`lat`, `lon`) to their nearest site, whole km, configuration order breaking ties; then the
   * zones without, in fallback order.
   */
  staticOrder(lat: number, lon: number): string[] {
    const km = new Map<string, number>();
    for (const [zone, sites] of this.sites) {
      let best = Infinity;
      for (const s of sites) best = Math.min(best, Math.round(distanceKm(lat, lon, s.lat, s.lon)));
      km.set(zone, best);
    }
    const located = [...km.keys()].sort((a, b) => km.get(a)! - km.get(b)! || this.positionOf(a) - this.positionOf(b));
    return [...located, ...this.fallbackOrder.filter((z) => !km.has(z))];
  }

  has(id: string): boolean {
    return this.position.has(id);
  }

  /** Position in configuration order (ties in the ordered zone index are broken by it); −1 for an unknown zone. */
  positionOf(id: string): number {
    return this.position.get(id) ?? -1;
  }

  /** `id` and each configured ancestor of it, nearest first (`0.1` → `0.1`, `0`). */
  selfAndAncestors(id: string): string[] {
    const out: string[] = [];
    for (let z: string | undefined = id; z !== undefined; z = parentOf(z)) if (this.position.has(z)) out.push(z);
    return out;
  }
}

/** Coordinates (degrees) a zone stands at: its own, or one of its data centers'. */
export interface ZoneSite {
  readonly zone: string;
  readonly lat: number;
  readonly lon: number;
}

/** The parent id of a zone id (`0.1` → `0`), undefined for a top-tier zone. */
export function parentOf(id: string): string | undefined {
  const dot = id.lastIndexOf('.');
  return dot < 0 ? undefined : id.slice(0, dot);
}

/** How near-equal RTTs tie in the ordered zone index. */
export interface Tolerance {
  /** Zones within this many ms of their band's best tie. */
  readonly ms: number;
  /** … or within this share of the band's best (percent); the wider applies. */
  readonly percent: number;
}

/**
 * The ordered zone index from per-zone RTTs (docs/PRODUCT.md §5): each zone's RTT is the minimum
 * over its own and its descendants' (`own`: zone id → RTT in ms, as measured by that zone's
 * agents); zones are sorted by it, and a zone within the tolerance of its band's best joins that
 * band. Inside a band the configuration order decides, so RTTs that wobble by a few ms do not
 * flip the answer between queries. Unmeasured zones follow in fallback order.
 *
 * The definition of the order: `ProximityDatabase.lookup` computes the same over typed arrays
 * (no map per lookup), and `proximityDatabase.test.ts` checks the two agree.
 * @returns zone ids best first, and the effective RTT of every measured zone.
 */
export function orderZones(tree: ZoneTree, own: ReadonlyMap<string, number>, tolerance: Tolerance): { order: string[]; rtts: Map<string, number> } {
  const rtts = new Map<string, number>();
  for (const [zone, rtt] of own) {
    for (const z of tree.selfAndAncestors(zone)) {
      const was = rtts.get(z);
      if (was === undefined || rtt < was) rtts.set(z, rtt);
    }
  }
  const byRtt = [...rtts].sort((a, b) => a[1] - b[1] || tree.positionOf(a[0]) - tree.positionOf(b[0]));
  const order: string[] = [];
  for (let i = 0; i < byRtt.length;) {
    const best = byRtt[i]![1];
    const limit = best + Math.max(tolerance.ms, (best * tolerance.percent) / 100);
    let j = i;
    while (j < byRtt.length && byRtt[j]![1] <= limit) j++;
    const band = byRtt.slice(i, j).map(([z]) => z);
    band.sort((a, b) => tree.positionOf(a) - tree.positionOf(b));
    order.push(...band);
    i = j;
  }
  for (const z of tree.fallbackOrder) if (!rtts.has(z)) order.push(z);
  return { order, rtts };
}
