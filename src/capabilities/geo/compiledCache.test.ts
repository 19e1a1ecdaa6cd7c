import test from 'ava';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatQualifiers } from '../../core/location/location.js';
import { parseIp } from '../../core/net/ipAddress.js';
import { unpackId } from '../../core/lpm/rangeTable.js';
import { buildLocationImage } from './buildImage.js';
import { compiledFileIdentity, loadOrBuildCompiled } from './compiledCache.js';
import { readImage } from './compiledImage.js';
import { geoRootSchema } from './capability.js';
import type { GeoConfig } from './geoSchema.js';
import { compiledPath, loadLocationImage, sourcePath } from './loadSources.js';
import { LOCATION_FORMATS } from './locationFormats.js';
import { openLocationDb } from './openLocationDb.js';

/**
 * The compiled location file as the cache of `geo.sources` (issue 26, item 1: a restart loads the
 * compiled file instead of parsing the sources, and never serves it stale).
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-geo-cache-'));
const configFile = join(dir, 'gslbd.yaml');
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

/** A `geo` section: one NetScaler file (10.0.0.0/8 in `country`) and its compiled cache, both in a directory of the test's own. */
function cached(name: string, country: string): GeoConfig {
  writeFileSync(join(dir, `${name}.csv`), `10.0.0.0,10.255.255.255,,${country}\n`);
  return geoRootSchema.parse({ compiled: `${name}.gdb`, sources: [{ format: 'netscaler', path: `${name}.csv` }] });
}

const load = (geo: GeoConfig, force = false) =>
  loadOrBuildCompiled(geo, compiledPath(geo.compiled!, configFile), (s) => sourcePath(s, configFile), LOCATION_FORMATS, force);

const countryOf = (bytes: Uint8Array, address = '10.1.2.3'): string => {
  const { db } = openLocationDb(readImage(bytes), 'typescript');
  return formatQualifiers(db.location(unpackId(db.lookup(parseIp(address)))).qualifiers);
};

test('missing: built from the sources and written; the next start loads the file as it is', (t) => {
  const geo = cached('first', 'NL');
  const built = load(geo);
  t.like(built.cache, { state: 'rebuilt', reason: 'missing', file: join(dir, 'first.gdb') });
  t.is(built.cache.writeError, undefined);
  t.is(countryOf(built.bytes), 'EU.NL');
  // Byte comparisons with Buffer.equals: t.deepEqual walks a typed array element by element (minutes for an image).
  t.true(readFileSync(join(dir, 'first.gdb')).equals(built.bytes), 'the file holds the built image');
  const again = load(geo);
  t.deepEqual(
    again.cache,
    { file: join(dir, 'first.gdb'), state: 'fresh', identity: compiledFileIdentity(join(dir, 'first.gdb')) },
    'the identity of the file read keys its derived tables',
  );
  t.true(Buffer.from(again.bytes).equals(built.bytes), 'the file itself, not a new build');
  // The engine's loader takes the same path when geo.compiled and geo.sources are both given.
  t.like(loadLocationImage(geo, configFile).cache, { state: 'fresh' });
});

test('a source rewritten with the same size and modification time is noticed (npm installs package files with a fixed mtime)', (t) => {
  const geo = cached('same-size', 'NL');
  load(geo);
  const csv = join(dir, 'same-size.csv');
  const { atime, mtime, size } = statSync(csv);
  writeFileSync(csv, `10.0.0.0,10.255.255.255,,DE\n`);
  utimesSync(csv, atime, mtime);
  t.is(statSync(csv).size, size);
  const after = load(geo);
  t.like(after.cache, { state: 'rebuilt', reason: 'sources changed' });
  t.is(countryOf(after.bytes), 'EU.DE', 'never the stale data');
  t.like(load(geo).cache, { state: 'fresh' });
});

test('custom entries, the mode and the list of sources are part of what the file was built from', (t) => {
  const geo = cached('inputs', 'NL');
  load(geo);
  const raw = { compiled: 'inputs.gdb', sources: [{ format: 'netscaler', path: 'inputs.csv' }] };
  const custom = load(geoRootSchema.parse({ ...raw, custom: [{ cidr: '10.1.0.0/16', location: 'EU.FR' }] }));
  t.like(custom.cache, { state: 'rebuilt', reason: 'sources changed' });
  t.deepEqual([countryOf(custom.bytes), countryOf(custom.bytes, '10.2.0.1')], ['EU.FR', 'EU.NL']);
  t.like(load(geoRootSchema.parse({ ...raw, mode: 'lenient' })).cache, { state: 'rebuilt', reason: 'sources changed' });
  writeFileSync(join(dir, 'inputs-more.csv'), '192.0.2.0,192.0.2.255,,JP\n');
  const twoSources = geoRootSchema.parse({ ...raw, sources: [...raw.sources, { format: 'netscaler', path: 'inputs-more.csv' }] });
  t.like(load(twoSources).cache, { state: 'rebuilt', reason: 'sources changed' });
  t.like(load(twoSources).cache, { state: 'fresh' });
});

test('a file built without a stamp, a corrupt file, or force: built again', (t) => {
  const geo = cached('other', 'NL');
  const file = join(dir, 'other.gdb');
  const plain = buildLocationImage({ sources: geo.sources, custom: [], mode: 'strict', resolvePath: (s) => sourcePath(s, configFile) });
  writeFileSync(file, plain.image);
  t.like(load(geo).cache, { state: 'rebuilt', reason: 'built without a stamp' });
  writeFileSync(file, 'not a compiled file');
  const corrupt = load(geo);
  t.like(corrupt.cache, { state: 'rebuilt' });
  t.regex(corrupt.cache.reason!, /^not a usable compiled file/);
  t.is(countryOf(corrupt.bytes), 'EU.NL');
  t.like(load(geo, true).cache, { state: 'rebuilt', reason: 'forced' });
});

test('a file that cannot be written: the start runs on the built data and says why', (t) => {
  writeFileSync(join(dir, 'a-file'), '');
  cached('unwritable', 'NL');
  const geo = geoRootSchema.parse({ compiled: 'a-file/geo.gdb', sources: [{ format: 'netscaler', path: 'unwritable.csv' }] });
  const r = load(geo);
  t.like(r.cache, { state: 'rebuilt', reason: 'unreadable (ENOTDIR)' });
  t.regex(r.cache.writeError!, /EEXIST: file already exists, mkdir/);
  t.is(countryOf(r.bytes), 'EU.NL');
});

test('a bad source line in strict mode fails the load: the old file is not served instead', (t) => {
  const geo = cached('broken', 'NL');
  load(geo);
  writeFileSync(join(dir, 'broken.csv'), 'not,a,netscaler,line\n');
  t.throws(() => load(geo), { message: /broken\.csv:1/ });
});
