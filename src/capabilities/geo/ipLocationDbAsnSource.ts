import { parseRangeFields, readDelimitedFile, type LoadMode, type SkippedLines } from './delimitedFile.js';
import { qualifiersFromData, type Location } from '../../core/location/location.js';
import type { FamilyTilings, LocationFormat } from './locationFormat.js';
import { ipVersionOption } from './ipLocationDbSource.js';
import { resolveEntries, type Family, type RangeEntry } from '../../core/lpm/tiling.js';

/**
 * `format: ip-location-db-asn`: an ip-location-db ASN file (`ip_range_start,ip_range_end,
 * autonomous_system_number,autonomous_system_organization`), read with
 * {@link loadIpLocationDbAsn}. An overlay: it refines the locations of the location sources.
 */
export const ipLocationDbAsnFormat: LocationFormat<typeof ipVersionOption> = {
  name: 'ip-location-db-asn',
  options: ipVersionOption,
  load(file, source, { mode, skipped }) {
    const asn = loadIpLocationDbAsn(file, source.ipVersion, mode, skipped);
    return { kind: 'overlay', v4: asn.v4, v6: asn.v6, refine: (location, value) => withAutonomousSystem(location, asn.systems[value - 1]!) };
  },
};

/** An autonomous system of the ASN overlay. */
export interface AutonomousSystem {
  readonly asn: number;
  readonly organization: string;
}

/** The ASN overlay: tilings whose values index `systems` (0 = no AS data). */
export interface AsnOverlay extends FamilyTilings {
  /** `systems[v - 1]` is the AS of tiling value v. */
  readonly systems: readonly AutonomousSystem[];
}

/**
 * Loads an ASN file. Applied over the location sources, it replaces the ISP qualifier with the
 * AS organisation, qualifier 6 with `AS<number>` and sets the ASN (src/capabilities/geo/README.md).
 * @throws SourceLineError in strict mode; Error when the file is unreadable.
 */
export function loadIpLocationDbAsn(file: string, numericFamily: Family | undefined, mode: LoadMode, skipped: SkippedLines): AsnOverlay {
  const entries: Record<Family, RangeEntry[]> = { 4: [], 6: [] };
  const systems: AutonomousSystem[] = [];
  const byKey = new Map<string, number>();
  readDelimitedFile(file, mode, skipped, (f) => {
    if (f.length !== 4) throw new Error(`expected 4 fields for an ip-location-db asn file; found ${f.length}`);
    const { family, start, end } = parseRangeFields(f[0]!, f[1]!, numericFamily);
    if (!/^\d+$/.test(f[2]!) || Number(f[2]) < 1 || Number(f[2]) > 4294967295) throw new Error(`AS number "${f[2]}" is not in 1…4294967295`);
    const key = `${f[2]}\u0000${f[3]}`;
    let value = byKey.get(key);
    if (value === undefined) {
      systems.push({ asn: Number(f[2]), organization: f[3]! });
      value = systems.length;
      byKey.set(key, value);
    }
    entries[family].push({ start, end, value });
  });
  return { v4: resolveEntries(4, entries[4]), v6: resolveEntries(6, entries[6]), systems };
}

/** A location with the ISP/org qualifiers and the ASN taken from an autonomous system. */
export function withAutonomousSystem(base: Location, as: AutonomousSystem): Location {
  const q = [...base.qualifiers];
  q[4] = as.organization;
  q[5] = `AS${as.asn}`;
  const out: { -readonly [K in keyof Location]: Location[K] } = { qualifiers: qualifiersFromData(q) };
  if (base.lat !== undefined && base.lon !== undefined) {
    out.lat = base.lat;
    out.lon = base.lon;
  }
  out.asn = as.asn;
  return out;
}
