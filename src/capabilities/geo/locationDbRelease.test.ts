import test from 'ava';
import { buildLocationImage } from './buildImage.js';
import { readImage } from './compiledImage.js';
import { geoSchema } from './geoSchema.js';
import { openLocationDb } from './openLocationDb.js';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseIp } from '../../core/net/ipAddress.js';
import { LocationDbReleasedError } from '../../core/location/locationDbRelease.js';
import { hugePageBuffer, releaseHugePages } from '../../core/lpm/hugePages.js';
import { loadGeoAddon } from '../../core/lpm/nativeAddon.js';

/**
 * `LocationDb.release`: a database a reload replaced frees its memory at once (the addon's table
 * ends, the image buffer is detached) instead of at garbage collection, and every later use throws
 * instead of reading freed memory; tables derived from it are told (`onRelease`).
 */

const dir = mkdtempSync(join(tmpdir(), 'gslbd-geo-release-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

function image(): ReturnType<typeof readImage> {
  const csv = join(dir, 'release.csv');
  writeFileSync(csv, '10.0.0.0,10.255.255.255,EU,NL\n2001:db8::,2001:db8::ffff,NA,US\n');
  const geo = geoSchema.parse({ sources: [{ format: 'netscaler', path: csv }] });
  return readImage(buildLocationImage({ sources: geo.sources, custom: [], mode: 'strict', resolvePath: (s) => s.path! }).image);
}

for (const implementation of ['native', 'typescript'] as const) {
  test(`${implementation}: release frees the image now, every later use throws, listeners run once`, (t) => {
    const img = image();
    t.true(img.ownsBuffer);
    const db = openLocationDb(img, implementation).db;
    t.is(db.implementation, implementation);
    const calls: string[] = [];
    db.onRelease!(() => calls.push('first'));
    t.true(db.lookup(parseIp('10.1.2.3')) > 0);
    db.release!();
    db.release!();
    db.onRelease!(() => calls.push('late'));
    t.deepEqual(calls, ['first', 'late']);
    // Detached: the memory is gone without a collection, and no view can read it.
    t.is(img.buffer.byteLength, 0);
    t.is(img.v4.starts.length, 0);
    for (const use of [
      () => db.lookup(parseIp('10.1.2.3')),
      () => db.lookup(parseIp('2001:db8::1')),
      () => db.location(1),
      () => db.tilings!(),
      () => db.lookupBatch!(4, new Uint32Array(1), new Uint32Array(1), new Uint8Array(1)),
      () => db.lookupBatch!(6, new Uint32Array(4), new Uint32Array(1), new Uint8Array(1)),
    ]) {
      const e = t.throws(use);
      t.is((e as { code?: string }).code, 'ERR_GSLBD_TABLE_RELEASED');
    }
  });
}

for (const implementation of ['native', 'typescript'] as const) {
  test(`${implementation}: a release in steps refuses use from its first step and frees the image and each derived table in steps of their own`, (t) => {
    // Issue 17: the geo capability spreads the release of a replaced database over turns (runInSlices).
    const img = image();
    const db = openLocationDb(img, implementation).db;
    const calls: number[] = [];
    for (const n of [1, 2, 3]) db.onRelease!(() => calls.push(n));
    const steps = db.releaseSteps!();
    let yields = 0;
    const first = steps.next();
    t.false(first.done);
    yields++;
    t.is((t.throws(() => db.lookup(parseIp('10.1.2.3'))) as { code?: string }).code, 'ERR_GSLBD_TABLE_RELEASED');
    t.true(calls.length <= 1, `${calls.length} derived tables freed in the first step`);
    while (!steps.next().done) yields++;
    // Three derived tables and the image: at least one step each after the first.
    t.true(yields >= 3, `${yields} yields`);
    t.deepEqual(calls, [1, 2, 3]);
    t.is(img.buffer.byteLength, 0, 'the image is detached');
    db.release!();
    t.deepEqual(calls, [1, 2, 3], 'released once');
    t.true(db.releaseSteps!().next().done, 'nothing left to release');
  });
}

test('an image inside a larger buffer is not detached (other views may share it); its database still refuses use', (t) => {
  const own = image();
  const bytes = new Uint8Array(own.buffer.byteLength + 64);
  bytes.set(new Uint8Array(own.buffer), 64);
  const shared = readImage(bytes.subarray(64));
  t.false(shared.ownsBuffer);
  const db = openLocationDb(shared, 'native').db;
  db.release!();
  t.is(bytes.buffer.byteLength, own.buffer.byteLength + 64);
  t.throws(() => db.lookup(parseIp('10.1.2.3')), { code: 'ERR_GSLBD_TABLE_RELEASED' } as never);
});

test('releaseHugePages unmaps a huge-page buffer now and leaves every other buffer alone', (t) => {
  t.truthy(loadGeoAddon().addon, 'the native addon must load');
  const huge = hugePageBuffer(4 << 20)!;
  t.truthy(huge);
  new Uint8Array(huge).fill(7);
  t.true(releaseHugePages(huge));
  t.is(huge.byteLength, 0);
  t.false(releaseHugePages(huge));
  const plain = new ArrayBuffer(16);
  t.false(releaseHugePages(plain));
  t.is(plain.byteLength, 16);
  t.true(new LocationDbReleasedError('x') instanceof Error);
});
