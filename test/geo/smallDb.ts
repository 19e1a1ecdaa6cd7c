import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { geoSchema } from '../../src/capabilities/geo/geoSchema.js';
import { buildLocationImage } from '../../src/capabilities/geo/buildImage.js';
import { readImage } from '../../src/capabilities/geo/compiledImage.js';
import { parseIp } from '../../src/core/net/ipAddress.js';
import { formatQualifiers } from '../../src/core/location/location.js';
import type { LocationDb } from '../../src/core/location/locationDb.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { unpackId, unpackPrefix } from '../../src/core/lpm/rangeTable.js';

const dir = mkdtempSync(join(tmpdir(), 'gslbd-geo-'));
let files = 0;

/** Writes a temporary file and returns its path. */
export function tempFile(text: string, suffix = '.csv'): string {
  const file = join(dir, `f${files++}${suffix}`);
  writeFileSync(file, text);
  return file;
}

/**
 * Builds a small database from NetScaler file text and raw `geo.custom` entries (validated by the
 * real schema) and opens it with both implementations.
 */
export function smallDbs(netscaler: string | undefined, custom: unknown[] = []): { native: LocationDb; reference: LocationDb } {
  const geo = geoSchema.parse({
    sources: netscaler === undefined ? [] : [{ format: 'netscaler', path: tempFile(netscaler) }],
    custom,
  });
  const built = buildLocationImage({ sources: geo.sources, custom: geo.custom, mode: 'strict', resolvePath: (s) => s.path! });
  const image = readImage(built.image);
  return { native: openLocationDb(image, 'native').db, reference: openLocationDb(image, 'typescript').db };
}

/** `location/prefix` of an address in a database: `EU.NL/16`, `unknown/0`. */
export function answer(db: LocationDb, address: string): string {
  const packed = db.lookup(parseIp(address));
  const id = unpackId(packed);
  return `${id === 0 ? 'unknown' : formatQualifiers(db.location(id).qualifiers)}/${unpackPrefix(packed)}`;
}
