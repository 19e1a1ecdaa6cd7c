import { decodeLocation, NO_COORDINATE, RECORD_WORDS, type LocationImage } from './compiledImage.js';
import type { Location } from '../../core/location/location.js';
import type { LocationTable } from './locationTable.js';

/**
 * The location section of a compiled file being written: fixed 9-word records (six string-pool
 * offsets, latitude and longitude in 1e-4 degrees, ASN) and a deduplicated UTF-8 string pool.
 * Record 0 is the unknown location.
 */
export class LocationRecords {
  private words: number[] = [];
  private readonly strings = new Map<string, number>([['', 0]]);
  private poolParts: Uint8Array[] = [new Uint8Array(1)];
  private poolBytes = 1;
  private base: { records: Uint32Array; pool: Uint8Array } | undefined;

  /** Records for every location of an interned table, in id order. */
  static fromTable(table: LocationTable): LocationRecords {
    const r = new LocationRecords();
    for (let id = 0; id < table.size; id++) r.append(table.get(id));
    return r;
  }

  /** Starts from the locations of an existing image (copied, not decoded); {@link findOrAdd} appends. */
  static fromImage(image: LocationImage): LocationRecords {
    const r = new LocationRecords();
    r.base = { records: image.records, pool: image.pool };
    r.poolParts = [image.pool];
    r.poolBytes = image.pool.length;
    r.strings.clear();
    return r;
  }

  /** Number of records. */
  get size(): number {
    return (this.base ? this.base.records.length / RECORD_WORDS : 0) + this.words.length / RECORD_WORDS;
  }

  /**
   * Id of a location equal to `location`, appending it when absent. For records that came from an
   * image the search is linear (it serves a handful of custom entries, not bulk data).
   */
  findOrAdd(location: Location): number {
    const enc = this.encodeNumbers(location);
    if (this.base) {
      const r = this.base.records;
      for (let id = 0; id < r.length / RECORD_WORDS; id++) {
        const b = id * RECORD_WORDS;
        if (r[b + 6] !== enc[0] || r[b + 7] !== enc[1] || r[b + 8] !== enc[2]) continue;
        const found = decodeLocation(this.base, id);
        if (found.qualifiers.every((q, i) => q === location.qualifiers[i])) return id;
      }
    }
    const own = this.words;
    for (let i = 0; i < own.length; i += RECORD_WORDS) {
      if (own[i + 6] !== enc[0] || own[i + 7] !== enc[1] || own[i + 8] !== enc[2]) continue;
      if (location.qualifiers.every((q, k) => this.stringAt(own[i + k]!) === q)) return this.size - (own.length - i) / RECORD_WORDS;
    }
    return this.append(location);
  }

  private append(location: Location): number {
    const id = this.size;
    for (const q of location.qualifiers) this.words.push(this.intern(q));
    this.words.push(...this.encodeNumbers(location));
    return id;
  }

  private encodeNumbers(l: Location): [number, number, number] {
    const known = l.lat !== undefined && l.lon !== undefined;
    return [(known ? Math.round(l.lat! * 1e4) : NO_COORDINATE) >>> 0, (known ? Math.round(l.lon! * 1e4) : NO_COORDINATE) >>> 0, (l.asn ?? 0) >>> 0];
  }

  private intern(s: string): number {
    let off = this.strings.get(s);
    if (off === undefined) {
      if (s === '') return 0;
      const bytes = new TextEncoder().encode(`${s}\u0000`);
      off = this.poolBytes;
      this.poolParts.push(bytes);
      this.poolBytes += bytes.length;
      this.strings.set(s, off);
    }
    return off;
  }

  private stringAt(offset: number): string {
    for (const [s, o] of this.strings) if (o === offset) return s;
    return '';
  }

  /** All records, 9 words each. */
  records(): Uint32Array {
    const baseLen = this.base ? this.base.records.length : 0;
    const out = new Uint32Array(baseLen + this.words.length);
    if (this.base) out.set(this.base.records);
    out.set(this.words, baseLen);
    return out;
  }

  /** The string pool. */
  pool(): Uint8Array {
    const out = new Uint8Array(this.poolBytes);
    let at = 0;
    for (const p of this.poolParts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}
