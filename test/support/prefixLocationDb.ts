import { parseCidr, type IpAddress } from '../../src/core/net/ipAddress.js';
import { qualifiersFromData, type Location } from '../../src/core/location/location.js';
import { type LocationDb } from '../../src/core/location/locationDb.js';
import { RangeLocationDb } from '../../src/capabilities/geo/rangeLocationDb.js';
import { LocationTable } from '../../src/capabilities/geo/locationTable.js';
import { RangeBuilder4, RangeBuilder6 } from '../../src/core/lpm/rangeTable.js';

/** One entry of a test location map: a prefix and the location data behind it. */
export interface PrefixEntry {
  readonly cidr: string;
  /** Data fields in dotted form (`Africa.ZMB`): missing fields are unknown (''), never wildcards. */
  readonly location: string;
  readonly lat?: number;
  readonly lon?: number;
}

/**
 * A {@link RangeLocationDb} built in code from possibly nested prefixes, the longest prefix
 * winning whatever the order of the entries (as a location file with overrides would behave).
 * Tests use it to place clients at exact locations.
 * @throws Error when the same prefix is given twice.
 */
export function prefixLocationDb(entries: readonly PrefixEntry[]): RangeLocationDb {
  const table = new LocationTable();
  const parsed = entries.map((e) => {
    const { address, prefix } = parseCidr(e.cidr);
    const bits = address.family === 4 ? 32 : 128;
    const start = toBig(address);
    const size = 1n << BigInt(bits - prefix);
    const location: Location = {
      qualifiers: qualifiersFromData(e.location.split('.')),
      ...(e.lat !== undefined && e.lon !== undefined ? { lat: e.lat, lon: e.lon } : {}),
    };
    return { family: address.family, prefix, start, end: start + size - 1n, id: table.intern(location), cidr: e.cidr };
  });
  const v4 = new RangeBuilder4();
  const v6 = new RangeBuilder6();
  for (const family of [4, 6] as const) {
    const mine = parsed.filter((p) => p.family === family);
    const seen = new Set<string>();
    for (const p of mine) {
      const key = `${p.start}/${p.prefix}`;
      if (seen.has(key)) throw new Error(`prefix ${p.cidr} is given twice`);
      seen.add(key);
    }
    const bounds = [...new Set(mine.flatMap((p) => [p.start, p.end + 1n]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (let i = 0; i + 1 < bounds.length; i++) {
      const from = bounds[i]!;
      const to = bounds[i + 1]! - 1n;
      let best: (typeof mine)[number] | undefined;
      for (const p of mine) if (p.start <= from && from <= p.end && (!best || p.prefix > best.prefix)) best = p;
      if (!best) continue;
      if (family === 4) v4.add(Number(from), Number(to), best.id);
      else v6.add(words(from), words(to), best.id);
    }
  }
  return new RangeLocationDb(table, v4.build(), v6.build(), ['test prefixes']);
}

function toBig(a: IpAddress): bigint {
  if (a.family === 4) return BigInt(a.w0);
  return (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n) | (BigInt(a.w2) << 32n) | BigInt(a.w3);
}

function words(v: bigint): number[] {
  return [Number((v >> 96n) & 0xffffffffn), Number((v >> 64n) & 0xffffffffn), Number((v >> 32n) & 0xffffffffn), Number(v & 0xffffffffn)];
}

/**
 * The same database behind the bare {@link LocationDb} interface (as a native implementation
 * would be): records get no answer classes, so stages rank per query from the location itself.
 */
export function opaque(db: LocationDb): LocationDb {
  return {
    implementation: db.implementation,
    lookup: (a) => db.lookup(a),
    location: (id) => db.location(id),
    describe: () => db.describe(),
  };
}
