import type { Location } from '../../core/location/location.js';
import type { CompiledDataCenter } from '../../core/model/topology.js';
import { oneGroupRanking, type DecisionStep } from '../../pipeline/selection/locationDecision.js';
import type { DcRanking } from '../../pipeline/selection/ranking.js';
import type { LocationReader } from '../../pipeline/selection/stage.js';
import { distanceTo, proximityRanking, sharedScore } from './proximityRanking.js';

/**
 * The location reader of a static-proximity record (answer classes): what the stage reads of a
 * location is the order in which the rules of `proximityRanking.ts` rank the record's data
 * centers (`unknown` for a location the data says nothing about); per class it keeps that
 * ranking (null: unknown). Its steps: the ranking; for an unknown location rule 5 — the
 * `default` data centers as one group, then every data center as one group.
 */
export function proximityReader(dcs: readonly CompiledDataCenter[], defaults: ReadonlySet<string>): LocationReader {
  const order = new ProximityOrder(dcs);
  const defaultGroup = oneGroupRanking(dcs, (dc) => defaults.has(dc.name));
  const everyone = oneGroupRanking(dcs, () => true);
  const rankings = new Map<string, DcRanking>();
  return {
    slot: 'rank',
    id: JSON.stringify(['static-proximity', dcs.map((d) => [d.index, d.qualifiers, d.lat, d.lon]), [...defaults].sort()]),
    read: (location, known) => (known ? order.key(location) : 'unknown'),
    classData(location, known) {
      if (!known) return null;
      const key = order.key(location);
      let r = rankings.get(key);
      if (!r) rankings.set(key, (r = proximityRanking(location, dcs)));
      return r;
    },
    steps(data): DecisionStep[] {
      const ranking = data as DcRanking | null;
      if (ranking !== null) return [{ residual: true, ranking }];
      return [
        { residual: true, ranking: defaultGroup },
        { residual: true, ranking: everyone },
      ];
    },
  };
}

/**
 * The static-proximity order of a fixed set of data centers as a short string key, computed
 * without allocation per location (110k locations in GeoLite2 City): the same comparison as
 * {@link proximityRanking}, whose groups it names; equal keys mean equal rankings.
 */
class ProximityOrder {
  private readonly shared: Int32Array;
  private readonly km: Float64Array;
  private readonly idx: Int32Array;

  constructor(private readonly dcs: readonly CompiledDataCenter[]) {
    this.shared = new Int32Array(dcs.length);
    this.km = new Float64Array(dcs.length);
    this.idx = new Int32Array(dcs.length);
  }

  key(client: Location): string {
    const { dcs, shared, km, idx } = this;
    for (let i = 0; i < dcs.length; i++) {
      const dc = dcs[i]!;
      shared[i] = sharedScore(client.qualifiers, dc.qualifiers);
      km[i] = distanceTo(client, dc);
      idx[i] = i;
    }
    // Insertion sort (stable): a record has a handful of data centers.
    for (let i = 1; i < idx.length; i++) {
      const x = idx[i]!;
      let j = i - 1;
      while (j >= 0 && this.before(x, idx[j]!)) {
        idx[j + 1] = idx[j]!;
        j--;
      }
      idx[j + 1] = x;
    }
    let key = '';
    for (let i = 0; i < idx.length; i++) {
      if (i > 0) key += this.before(idx[i - 1]!, idx[i]!) ? '>' : '=';
      key += idx[i];
    }
    return key;
  }

  /** True when data center `a` ranks strictly before `b`. */
  private before(a: number, b: number): boolean {
    const { shared, km } = this;
    if (shared[a] !== shared[b]) return shared[a]! > shared[b]!;
    return km[a]! < km[b]!;
  }
}
