import { Reader } from 'mmdb-lib';
import { FILE_SIZE_LIMITS, readRegularFile } from '../../core/config/regularFile.js';
import { createRequire } from 'node:module';
import { qualifiersFromData, type Location } from '../../core/location/location.js';
import type { LocationTable } from './locationTable.js';
import { continentOfCountry } from '../../core/location/qualifierVocabulary.js';
import { RangeBuilder4, RangeBuilder6 } from '../../core/lpm/rangeTable.js';
import type { LocationFormat } from './locationFormat.js';

/**
 * `format: mmdb`: a MaxMind DB file (GeoIP2/GeoLite2 City or Country, ip-location-db `.mmdb`
 * builds), read with {@link loadMmdb}. No options of its own.
 */
export const mmdbFormat: LocationFormat<{}> = {
  name: 'mmdb',
  options: {},
  load(file, _source, { table }) {
    const v4 = new RangeBuilder4();
    const v6 = new RangeBuilder6();
    loadMmdb(file, table, v4, v6);
    return { kind: 'locations', v4: v4.build(), v6: v6.build() };
  },
};

/**
 * Loads a MaxMind DB file (`.mmdb`, format 2.0) into range builders, walking every network of the
 * search tree once. Data records are decoded with `mmdb-lib` (one decode per distinct record) and
 * mapped onto the six qualifiers:
 * - ip-location-db files (`country_code`, `state1`, `city`, `latitude`, `longitude`): continent
 *   derived from the country;
 * - MaxMind GeoIP2/GeoLite2 City/Country (`continent.code`, `country.iso_code`,
 *   `subdivisions[0].iso_code`, `city.names.en`, `location`).
 *
 * In an IPv6 tree the IPv4 subtree (`::/96`) feeds the IPv4 table, and MaxMind's aliases of it
 * (`::ffff:0:0/96`, `2002::/16`) are skipped so an IPv6 client never matches IPv4 data.
 *
 * @throws Error when the file cannot be read or is not a MaxMind DB.
 */
export function loadMmdb(path: string, table: LocationTable, v4: RangeBuilder4, v6: RangeBuilder6): void {
  const buf = readRegularFile(path, FILE_SIZE_LIMITS.location);
  const reader = new Reader(buf);
  const { nodeCount, recordSize, ipVersion } = reader.metadata;
  const nodeBytes = (recordSize * 2) / 8;
  const left = recordReader(buf, recordSize, 0);
  const right = recordReader(buf, recordSize, 1);
  const idByPointer = new Map<number, number>();

  // The data section starts 16 bytes after the search tree (MaxMind DB spec, "Data Section").
  const decoder = new Decoder(buf, reader.metadata.searchTreeSize + 16);
  const locationId = (pointer: number): number => {
    let id = idByPointer.get(pointer);
    if (id === undefined) {
      const record = decoder.decode(pointer - nodeCount + reader.metadata.searchTreeSize).value as MmdbRecord | null;
      id = record && typeof record === 'object' ? table.intern(locationFromRecord(record)) : 0;
      idByPointer.set(pointer, id);
    }
    return id;
  };

  const depthLimit = ipVersion === 4 ? 32 : 128;
  // Iterative depth-first walk, left (0) before right (1), so networks arrive in address order.
  // The stack never holds more than two entries per tree level, so fixed typed arrays suffice.
  const stackNode = new Float64Array(2 * 129 + 2);
  const stackDepth = new Uint8Array(2 * 129 + 2);
  const stackWords = new Uint32Array(4 * (2 * 129 + 2));
  const w = [0, 0, 0, 0];
  let top = 1;
  while (top > 0) {
    top--;
    const node = stackNode[top]!;
    const depth = stackDepth[top]!;
    for (let i = 0; i < 4; i++) w[i] = stackWords[top * 4 + i]!;
    if (ipVersion === 6 && isIpv4Alias(w, depth)) continue;
    if (node >= nodeCount) {
      if (node > nodeCount) emit(node, depth, w);
      continue;
    }
    if (depth >= depthLimit) continue;
    const offset = node * nodeBytes;
    // Right child first onto the stack so the left one is walked first.
    stackNode[top] = right(offset);
    stackDepth[top] = depth + 1;
    for (let i = 0; i < 4; i++) stackWords[top * 4 + i] = w[i]!;
    const word = depth >>> 5;
    stackWords[top * 4 + word] = (w[word]! | (0x80000000 >>> (depth & 31))) >>> 0;
    top++;
    stackNode[top] = left(offset);
    stackDepth[top] = depth + 1;
    for (let i = 0; i < 4; i++) stackWords[top * 4 + i] = w[i]!;
    top++;
  }

  function emit(pointer: number, depth: number, w: number[]): void {
    if (ipVersion === 4) {
      const start = w[0]!;
      const end = (start | hostBits(depth)) >>> 0;
      v4.add(start, end, locationId(pointer));
      return;
    }
    if (w[0] === 0 && w[1] === 0 && w[2] === 0 && depth >= 96) {
      const start = w[3]!;
      const end = (start | hostBits(depth - 96)) >>> 0;
      v4.add(start, end, locationId(pointer));
      return;
    }
    v6.add(w, lastAddress(w, depth), locationId(pointer));
  }
}

type MmdbRecord = Record<string, unknown>;

// mmdb-lib's data-section decoder is a public class but not re-exported from the package root.
const { default: Decoder } = createRequire(import.meta.url)('mmdb-lib/lib/decoder.js') as typeof import('mmdb-lib/lib/decoder.js');

/** Maps an ip-location-db or MaxMind record onto a {@link Location}. */
export function locationFromRecord(r: MmdbRecord): Location {
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const obj = (v: unknown): MmdbRecord => (v && typeof v === 'object' ? (v as MmdbRecord) : {});
  let country = str(r.country_code) || str(obj(r.country).iso_code) || str(obj(r.registered_country).iso_code);
  country = country.toUpperCase();
  const continent = str(obj(r.continent).code) || continentOfCountry(country);
  const subdivision = Array.isArray(r.subdivisions) ? obj(r.subdivisions[0]) : {};
  const region = str(r.state1) || str(subdivision.iso_code) || str(obj(subdivision.names).en);
  const city = str(r.city) || str(obj(obj(r.city).names).en);
  const isp = str(r.autonomous_system_organization) || str(r.isp);
  const loc = obj(r.location);
  const lat = typeof r.latitude === 'number' ? r.latitude : typeof loc.latitude === 'number' ? loc.latitude : undefined;
  const lon = typeof r.longitude === 'number' ? r.longitude : typeof loc.longitude === 'number' ? loc.longitude : undefined;
  const asn = typeof r.autonomous_system_number === 'number' ? r.autonomous_system_number : undefined;
  const location: { -readonly [K in keyof Location]: Location[K] } = {
    // Qualifier 6 falls back to `AS<number>`, as the ASN overlay of CSV sources sets it (README).
    qualifiers: qualifiersFromData([continent, country, region, city, isp, str(r.organization) || (asn !== undefined ? `AS${asn}` : '')]),
  };
  // Coordinates are rounded to 1e-4° (≈ 11 m) so float noise does not split equal locations.
  if (lat !== undefined && lon !== undefined) {
    location.lat = Math.round(lat * 1e4) / 1e4;
    location.lon = Math.round(lon * 1e4) / 1e4;
  }
  if (asn !== undefined) location.asn = asn;
  return location;
}

function recordReader(buf: Buffer, recordSize: number, side: 0 | 1): (offset: number) => number {
  switch (recordSize) {
    case 24:
      return side === 0 ? (o) => (buf[o]! << 16) | (buf[o + 1]! << 8) | buf[o + 2]! : (o) => (buf[o + 3]! << 16) | (buf[o + 4]! << 8) | buf[o + 5]!;
    case 28:
      return side === 0
        ? (o) => ((buf[o + 3]! & 0xf0) << 20) | (buf[o]! << 16) | (buf[o + 1]! << 8) | buf[o + 2]!
        : (o) => ((buf[o + 3]! & 0x0f) << 24) | (buf[o + 4]! << 16) | (buf[o + 5]! << 8) | buf[o + 6]!;
    case 32:
      return side === 0 ? (o) => buf.readUInt32BE(o) : (o) => buf.readUInt32BE(o + 4);
    default:
      throw new Error(`unsupported MaxMind DB record size ${recordSize}`);
  }
}

function lastAddress(w: readonly number[], prefix: number): number[] {
  return w.map((word, i) => {
    const kept = prefix - i * 32;
    if (kept >= 32) return word;
    return (word | hostBits(Math.max(0, kept))) >>> 0;
  });
}

/** Host-part mask of a 32-bit word when `kept` (0–32) leading bits belong to the network. */
function hostBits(kept: number): number {
  return kept >= 32 ? 0 : 0xffffffff >>> kept;
}

/** `::ffff:0:0/96` and `2002::/16` alias the IPv4 subtree in MaxMind's IPv6 trees. */
function isIpv4Alias(w: readonly number[], depth: number): boolean {
  if (depth >= 16 && w[0]! >>> 16 === 0x2002) return true;
  return depth >= 96 && w[0] === 0 && w[1] === 0 && w[2] === 0xffff;
}
