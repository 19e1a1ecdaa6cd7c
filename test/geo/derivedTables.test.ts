import test from 'ava';
import { copyFileSync, appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfiguredLocationDb } from '../../src/capabilities/geo/loadSources.js';
import type { GeoConfig } from '../../src/capabilities/geo/geoSchema.js';
import { geoCustomEntrySchema } from '../../src/capabilities/geo/customEntries.js';

/**
 * The store of tables derived from a compiled location file (`src/capabilities/geo/derivedTableFiles.ts`):
 * a database loaded unchanged from its compiled file gets one, beside the file; one built from its
 * sources gets none; after the sources change and the file is rebuilt, what was stored for the old
 * file is not read.
 */

// The tests share one directory and its store: serial, so one test's writes never land in another's count.
const dir = mkdtempSync(join(tmpdir(), 'gslbd-derived-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
copyFileSync(fileURLToPath(new URL('../fixtures/geo/ip-location-db-city.csv', import.meta.url)), join(dir, 'city.csv'));
const configFile = join(dir, 'gslbd.yaml');
const geo: GeoConfig = {
  compiled: 'city.gdb',
  sources: [{ format: 'ip-location-db-city', path: 'city.csv' }],
  custom: [],
  mode: 'strict',
  implementation: 'auto',
} as GeoConfig;

test.serial('a database loaded from its up-to-date compiled file keeps derived tables beside it; a rebuilt file never reads the old ones', async (t) => {
  const built = loadConfiguredLocationDb(geo, configFile);
  t.is(built.cache?.state, 'rebuilt');
  t.is(built.db.derivedTables, undefined, 'built from the sources: no store');
  const fresh = loadConfiguredLocationDb(geo, configFile);
  t.is(fresh.cache?.state, 'fresh');
  await fresh.db.derivedTables!.write('classes', Uint8Array.from([1, 2, 3, 4]));
  t.is(readdirSync(join(dir, 'city.gdb.derived')).length, 1);
  t.deepEqual([...loadConfiguredLocationDb(geo, configFile).db.derivedTables!.read('classes')!], [1, 2, 3, 4]);
  t.is(loadConfiguredLocationDb(geo, configFile).db.derivedTables!.read('other'), undefined);
  // The sources change: the next start rebuilds the compiled file, the one after reads it unchanged.
  appendFileSync(join(dir, 'city.csv'), '9.9.9.0,9.9.9.255,CH,Zurich,,Zurich,,47.37,8.54,Europe/Zurich\n');
  t.is(loadConfiguredLocationDb(geo, configFile).cache?.state, 'rebuilt');
  const after = loadConfiguredLocationDb(geo, configFile);
  t.is(after.cache?.state, 'fresh');
  t.is(after.db.derivedTables!.read('classes'), undefined, 'tables of the old file are not read');
});

test.serial('a compiled file read alone keeps derived tables too, keyed by its custom entries (they change the data served)', async (t) => {
  const alone = { ...geo, compiled: 'city.gdb', sources: [] } as GeoConfig;
  const first = loadConfiguredLocationDb(alone, configFile);
  await first.db.derivedTables!.write('classes', Uint8Array.from([5]));
  t.deepEqual([...loadConfiguredLocationDb(alone, configFile).db.derivedTables!.read('classes')!], [5]);
  const withCustom = { ...alone, custom: [geoCustomEntrySchema.parse({ cidr: '10.0.0.0/8', location: 'EU.NL' })] } as GeoConfig;
  t.is(loadConfiguredLocationDb(withCustom, configFile).db.derivedTables!.read('classes'), undefined);
});

test.serial('a write does not hold the event loop: it returns before the file is written, and its promise settles once it is', async (t) => {
  // Issue 17: the city data's tables are tens of MB; written in one turn they held a location reload 55-175 ms.
  const alone = { ...geo, compiled: 'city.gdb', sources: [] } as GeoConfig;
  const store = loadConfiguredLocationDb(alone, configFile).db.derivedTables!;
  const bytes = Uint8Array.from({ length: 1 << 20 }, (_, i) => i & 255);
  const written = store.write('large', bytes);
  t.is(store.read('large'), undefined, 'nothing is written within the call');
  await written;
  t.deepEqual(store.read('large'), Buffer.from(bytes));
  await t.notThrowsAsync(async () => store.write('x', Uint8Array.from([1])), 'a write settles');
});
