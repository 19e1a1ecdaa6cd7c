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
  private readonly position: ReadonlyMap<string, number>;

  constructor(ids: readonly string[], defaultOrder: readonly string[] = []) {
    this.ids = ids;
    this.position = new Map(ids.map((id, i) => [id, i]));
    const first = defaultOrder.filter((z) => this.position.has(z));
    this.fallbackOrder = [...new Set([...first, ...ids])];
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
