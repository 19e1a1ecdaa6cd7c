import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type { GeoSourceConfig } from '../config/schema.js';
import { RangeLocationDb, type LocationDb } from './locationDb.js';
import { LocationTable } from './locationTable.js';
import { loadMmdb } from './mmdbSource.js';
import { RangeBuilder4, RangeBuilder6 } from './rangeTable.js';

const require = createRequire(import.meta.url);

/**
 * Builds the location database from the configured sources, in order. Each address family may
 * come from one source only (an IPv4 file and an IPv6 file, or one file with both).
 * @throws Error naming the source when a file is missing, unreadable or overlaps another.
 */
export function loadLocationDb(sources: readonly GeoSourceConfig[], configFile: string): LocationDb {
  const table = new LocationTable();
  const v4 = new RangeBuilder4();
  const v6 = new RangeBuilder6();
  const names: string[] = [];
  for (const src of sources) {
    const file = sourcePath(src, configFile);
    try {
      loadMmdb(file, table, v4, v6);
    } catch (e) {
      throw new Error(`location source ${src.package ?? src.path}: ${(e as Error).message}`);
    }
    names.push(src.package ?? file);
  }
  return new RangeLocationDb(table, v4.build(), v6.build(), names);
}

/** Absolute path of a source: relative paths are relative to the configuration file. */
export function sourcePath(src: GeoSourceConfig, configFile: string): string {
  if (src.package !== undefined) {
    try {
      return require.resolve(src.package);
    } catch {
      throw new Error(`location source package file "${src.package}" is not installed (npm install)`);
    }
  }
  return resolve(dirname(configFile), src.path!);
}
