import { dirname, resolve as resolvePath } from 'node:path';
import type { ConfigProblem, IncludedPlace } from '../../core/config/load.js';
import { FileKindError, FILE_SIZE_LIMITS, readRegularFile } from '../../core/config/regularFile.js';
import { characterString, masterFileTtl, parseMasterFile, type MasterFileEntry } from '../../core/dns/masterFile.js';
import { parseRecordData } from '../../core/dns/presentation.js';
import type { RecordType } from '../../core/dns/records.js';
import { STATIC_RECORD_TYPES } from './zoneSchema.js';

/** Called with each zone file read (its full path and text), for the configuration's fingerprint. */
export type ZoneFileRead = (path: string, text: string) => void;

/**
 * Includes the zone files of a parsed (not yet validated) configuration: each zone with a
 * `zoneFile` (an RFC 1035 master file, relative to the configuration file's folder; a regular
 * file of at most `FILE_SIZE_LIMITS.config` bytes, as the configuration) gets the file's records
 * appended to its `records`, so they are validated and cross-checked as records written in YAML.
 *
 * The file's SOA and apex NS: a zone without `soa` takes the file's SOA (every field, the serial
 * as written, its TTL); a zone without `ns` takes the file's apex NS targets. A zone that sets
 * them keeps its own, and the file's must agree (the same `mname` and `rname`; the same NS set),
 * so the served SOA and NS never silently differ from the file an operator reads.
 * @returns `data` with the zone files included (a copy of each zone it changed; a file's entries
 *   with a problem left out), and the problems, each naming `zones[i].zoneFile` and `FILE:LINE`,
 *   reported with the schema's problems (`ConfigExpansion` in `src/core/config/load.ts`), and
 *   `placeOf`: the file, line and column of a record (or SOA, NS) the zone took from its file,
 *   so the loader names them for problems the schema and the cross references find later.
 */
export function includeZoneFiles(
  data: unknown,
  configFile: string,
  onRead?: ZoneFileRead,
): { data: unknown; problems: ConfigProblem[]; placeOf: (path: readonly PropertyKey[]) => IncludedPlace | undefined } {
  /** Per zone index: where its included records (from `first` on), SOA and NS are in its file. */
  const included = new Map<number, Included>();
  const placeOf = (path: readonly PropertyKey[]): IncludedPlace | undefined => zoneFilePlace(included, path);
  if (typeof data !== 'object' || data === null || !Array.isArray((data as { zones?: unknown }).zones)) return { data, problems: [], placeOf };
  const zones = (data as { zones: unknown[] }).zones;
  const problems: ConfigProblem[] = [];
  const expanded = zones.map((zone, i) => {
    if (typeof zone !== 'object' || zone === null) return zone;
    const z = zone as Record<string, unknown>;
    if (typeof z.zoneFile !== 'string' || typeof z.name !== 'string') return zone;
    const path = `zones[${i}].zoneFile`;
    const full = resolvePath(dirname(configFile), z.zoneFile);
    let text: string;
    try {
      text = readRegularFile(full, FILE_SIZE_LIMITS.config).toString('utf8');
    } catch (e) {
      problems.push({ path, message: e instanceof FileKindError ? e.reason : `cannot read "${z.zoneFile}": ${(e as Error).message}` });
      return zone;
    }
    onRead?.(full, text);
    const found: { line: number; message: string }[] = [];
    const places: Included = { path, file: z.zoneFile, first: Array.isArray(z.records) ? z.records.length : 0, records: [] };
    const content = zoneFileContent(z, text, (line, message) => void found.push({ line, message }), places);
    for (const p of found.sort((a, b) => a.line - b.line)) problems.push({ path, message: `${z.zoneFile as string}:${p.line}: ${p.message}` });
    included.set(i, places);
    return { ...z, ...content };
  });
  return { data: { ...(data as object), zones: expanded }, problems, placeOf };
}

/** Where one zone's included content is in its zone file. */
interface Included {
  /** `zones[i].zoneFile`, the path problems are reported under. */
  readonly path: string;
  /** The file as configured. */
  readonly file: string;
  /** Index in the zone's `records` of the first record from the file (the YAML's own come before). */
  readonly first: number;
  /** Line and column of each record from the file, in order. */
  readonly records: { line: number; col: number }[];
  /** The SOA's and the first apex NS's place, when the zone took them from the file. */
  soa?: { line: number; col: number };
  ns?: { line: number; col: number };
}

/**
 * The zone-file place of a document path (`zones[i].records[n]…` for a record from the file,
 * `zones[i].soa…` / `zones[i].ns…` when the file gave them), or undefined for the YAML's own.
 */
function zoneFilePlace(included: ReadonlyMap<number, Included>, path: readonly PropertyKey[]): IncludedPlace | undefined {
  if (path[0] !== 'zones' || typeof path[1] !== 'number') return undefined;
  const z = included.get(path[1]);
  if (z === undefined) return undefined;
  const at = (place: { line: number; col: number } | undefined, depth: number): IncludedPlace | undefined =>
    place && { path: z.path, file: z.file, ...place, depth };
  if (path[2] === 'records' && typeof path[3] === 'number') return at(z.records[path[3] - z.first], 4);
  if (path[2] === 'soa') return at(z.soa, 3);
  if (path[2] === 'ns') return at(z.ns, 3);
  return undefined;
}

/** The records, SOA and NS a zone gets from its file's text; problems go to `at`. */
function zoneFileContent(zone: Record<string, unknown>, text: string, at: (line: number, message: string) => void, places: Included): Record<string, unknown> {
  const zoneName = (zone.name as string).toLowerCase().replace(/\.$/, '');
  const file = parseMasterFile(text, zoneName);
  for (const p of file.problems) at(p.line, p.message);
  const records: Record<string, unknown>[] = Array.isArray(zone.records) ? [...(zone.records as Record<string, unknown>[])] : [];
  const out: Record<string, unknown> = {};
  let soa: MasterFileEntry | undefined;
  const apexNs: string[] = [];
  let apexNsEntry: MasterFileEntry | undefined;
  for (const e of file.entries) {
    const inside = e.owner === zoneName || e.owner.endsWith(`.${zoneName}`);
    if (!inside) {
      at(e.line, `"${e.owner}" is outside the zone ${zoneName}`);
      continue;
    }
    const name = e.owner === zoneName ? '@' : e.owner.slice(0, -zoneName.length - 1);
    if (e.type === 'SOA') {
      if (name !== '@') at(e.line, 'an SOA record is only at the apex');
      else if (soa) at(e.line, `a second SOA record (the first is at line ${soa.line})`);
      else soa = e;
      continue;
    }
    if (!(STATIC_RECORD_TYPES as readonly string[]).includes(e.type)) {
      at(e.line, `type ${e.type} is not served as a static record (${STATIC_RECORD_TYPES.join(', ')})`);
      continue;
    }
    let data: string | string[];
    try {
      data = e.type === 'TXT' ? e.fields.map((f) => characterString(f.raw)) : e.fields.map((f) => f.raw).join(' ');
      parseRecordData(e.type as RecordType, data);
    } catch (err) {
      at(e.line, `${e.type}: ${(err as Error).message}`);
      continue;
    }
    if (e.type === 'NS' && name === '@') {
      apexNs.push(data as string);
      apexNsEntry ??= e;
      continue;
    }
    records.push({ name, type: e.type, ...(e.ttl !== undefined ? { ttl: e.ttl } : {}), data });
    places.records.push({ line: e.line, col: e.col });
  }
  out.records = records;
  if (soa) {
    const f = soa.fields.map((x) => x.raw);
    const numbers = f.slice(2).map((x, i) => (i === 0 ? (/^\d+$/.test(x) ? Number(x) : undefined) : masterFileTtl(x)));
    if (f.length !== 7 || numbers.some((n) => n === undefined)) at(soa.line, 'SOA data is "mname rname serial refresh retry expire minimum"');
    else if (zone.soa === undefined) {
      const [serial, refresh, retry, expire, minimum] = numbers as number[];
      out.soa = { mname: f[0], rname: f[1], serial, refresh, retry, expire, minimum, ...(soa.ttl !== undefined ? { ttl: soa.ttl } : {}) };
      places.soa = { line: soa.line, col: soa.col };
    } else {
      const own = zone.soa as { mname?: unknown; rname?: unknown };
      const same = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase().replace(/\.$/, '') === b;
      if (!same(own.mname, f[0]!) || !same(own.rname, f[1]!))
        at(soa.line, `the file's SOA (${f[0]} ${f[1]}) differs from the zone's soa (${String(own.mname)} ${String(own.rname)}); remove one of them`);
    }
  }
  if (apexNsEntry !== undefined) {
    if (zone.ns === undefined) {
      out.ns = apexNs;
      places.ns = { line: apexNsEntry.line, col: apexNsEntry.col };
    } else {
      const own = Array.isArray(zone.ns) ? (zone.ns as unknown[]).map((n) => String(n).toLowerCase().replace(/\.$/, '')) : [];
      const sorted = (l: string[]): string => [...new Set(l)].sort().join(' ');
      if (sorted(own) !== sorted(apexNs))
        at(apexNsEntry.line, `the file's apex NS (${sorted(apexNs)}) differ from the zone's ns (${sorted(own)}); remove one of them`);
    }
  }
  return out;
}
