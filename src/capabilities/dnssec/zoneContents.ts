import { configuredName, isInZone, ownerInZone, parentName } from '../../core/dns/name.js';
import { TYPE_CODES, type RecordType } from '../../core/dns/records.js';

/** What the signer reads of the configuration to know which types exist at a name. */
export interface ContentsConfig {
  readonly zones: readonly { readonly name: string; readonly records: readonly { readonly name: string; readonly type: RecordType }[] }[];
  readonly records: readonly { readonly name: string; readonly type: RecordType }[];
}

/**
 * The record types configured at each name of one zone — static records, GSLB records and the
 * apex's SOA and NS — and the empty non-terminals above them, as the engine's zone index builds
 * its nodes (`src/pipeline/zones/zoneIndex.ts`). A NODATA answer's NSEC lists these types
 * (RFC 9824 §3.3), so a validator learns nothing false about the name beyond the denied type.
 */
export class ZoneContents {
  constructor(
    readonly apex: string,
    private readonly names: ReadonlyMap<string, readonly number[]>,
  ) {}

  /**
   * The configured types at `name` (canonical, inside the zone): its own, or, for a name that
   * is no node, those of the wildcard that synthesises it (RFC 4592 §3.3.1: `*.` + the closest
   * encloser); empty for an empty non-terminal or a name nothing synthesises.
   */
  typesAt(name: string): readonly number[] {
    const own = this.names.get(name);
    if (own) return own;
    let encloser = parentName(name);
    while (!this.names.has(encloser) && encloser !== this.apex && encloser !== '') encloser = parentName(encloser);
    return this.names.get(encloser === '' ? '*' : `*.${encloser}`) ?? [];
  }
}

/**
 * The contents of every configured zone, by apex. A name belongs to the most specific zone that
 * holds it, as queries find it.
 */
export function zoneContents(config: ContentsConfig): ReadonlyMap<string, ZoneContents> {
  const apexes = config.zones.map((z) => z.name);
  const zoneOf = (name: string): string | undefined => {
    let best: string | undefined;
    for (const a of apexes) if (isInZone(name, a) && (best === undefined || a.length > best.length)) best = a;
    return best;
  };
  const names = new Map<string, Map<string, Set<number>>>(apexes.map((a) => [a, new Map()]));
  const add = (name: string, type: number): void => {
    const apex = zoneOf(name);
    if (apex === undefined) return;
    const zone = names.get(apex)!;
    for (let n = name; ; n = parentName(n)) {
      if (!zone.has(n)) zone.set(n, new Set());
      if (n === apex || n === '') break;
    }
    zone.get(name)!.add(type);
  };
  for (const z of config.zones) {
    add(z.name, TYPE_CODES.SOA);
    add(z.name, TYPE_CODES.NS);
    for (const r of z.records) add(configuredName(ownerInZone(r.name, z.name)), TYPE_CODES[r.type]);
  }
  for (const r of config.records) add(r.name, TYPE_CODES[r.type]);
  return new Map(
    [...names].map(([apex, byName]) => [apex, new ZoneContents(apex, new Map([...byName].map(([n, types]) => [n, [...types].sort((a, b) => a - b)])))]),
  );
}
