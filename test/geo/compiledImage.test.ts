import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readImage, verifyImage, ImageError, RECORD_WORDS } from '../../src/capabilities/geo/compiledImage.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { repoRoot } from './cityImage.js';
import { tempFile } from './smallDb.js';

const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const fixtures = join(repoRoot, 'test', 'fixtures', 'geo');

function gslbd(...args: string[]) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', cwd: repoRoot });
}

test('gslbd geo build writes a compiled file that gslbd geo lookup reads, with both implementations', (t) => {
  const out = tempFile('', '.gdb');
  const built = gslbd(
    'geo',
    'build',
    '-o',
    out,
    `netscaler:${join(fixtures, 'netscaler.csv')}`,
    `ip-location-db-asn:${join(fixtures, 'ip-location-db-asn.csv')}`,
  );
  t.is(built.status, 0, built.stderr);
  t.regex(built.stdout, /: \d+ bytes, 10 locations, 17 IPv4 \+ 3 IPv6 ranges \(\d+ ms\)\n$/);
  for (const impl of ['native', 'typescript']) {
    const r = gslbd('geo', 'lookup', '10.1.1.9', '-f', out, '--implementation', impl);
    t.is(r.status, 0, r.stderr);
    t.deepEqual(JSON.parse(r.stdout), {
      address: '10.1.1.9',
      network: '10.1.1.0/24',
      prefix: 24,
      bits: 32,
      locationId: 7,
      location: 'NA.US.NY.NEW YORK',
      lat: 40.7128,
      lon: -74.006,
      implementation: impl,
    });
  }
  const v6 = JSON.parse(gslbd('geo', 'lookup', '2001:200::1', '-f', out).stdout) as Record<string, unknown>;
  t.is(v6.location, '....WIDE PROJECT.AS2500', 'unknown data qualifiers print empty');
  t.is(v6.network, '2001:200::/32');
});

test('gslbd geo build and lookup: bad input exits 1 with file:line or the reason', (t) => {
  const out = tempFile('', '.gdb');
  const bad = gslbd('geo', 'build', '-o', out, `netscaler:${join(fixtures, 'netscaler-malformed.csv')}`);
  t.is(bad.status, 1);
  t.regex(bad.stderr, /netscaler-malformed\.csv:3: expected from,to/);
  const lenient = gslbd('geo', 'build', '--lenient', '-o', out, `netscaler:${join(fixtures, 'netscaler-malformed.csv')}`);
  t.is(lenient.status, 0);
  t.regex(lenient.stderr, /^skipped 4 bad lines:\n/);
  t.is(gslbd('geo', 'build', '-o', out, 'whatever.csv').status, 1);
  t.is(gslbd('geo', 'lookup', 'not-an-ip', '-f', out).status, 1);
  const notImage = gslbd('geo', 'lookup', '10.0.0.1', '-f', join(fixtures, 'netscaler.csv'));
  t.is(notImage.status, 2);
  t.regex(notImage.stderr, /not a compiled location file/);
});

test('a compiled file is checked: bad magic, version, truncation, corrupted ranges', (t) => {
  const out = tempFile('', '.gdb');
  execFileSync(process.execPath, [cli, 'geo', 'build', '-o', out, `netscaler:${join(fixtures, 'netscaler.csv')}`]);
  const good = new Uint8Array(readFileSync(out));
  const image = readImage(good);
  t.notThrows(() => verifyImage(image));
  const broken = (edit: (b: Uint8Array, dv: DataView) => void): Uint8Array => {
    const b = good.slice();
    edit(b, new DataView(b.buffer));
    return b;
  };
  t.throws(() => readImage(broken((b) => (b[0] = 0x58))), { instanceOf: ImageError, message: 'not a compiled location file (no GSLBGEO1 header)' });
  t.throws(() => readImage(broken((_b, dv) => dv.setUint32(8, 2, true))), { message: 'format version 2; this gslbd reads version 1' });
  t.throws(() => readImage(good.slice(0, good.length - 1)), { message: /truncated or corrupt/ });
  // Swap two IPv4 range starts: the header is fine, the contents are not.
  const swapped = broken((b, dv) => {
    const off = image.layout.v4StartsOffset;
    const a = dv.getUint32(off + 4, true);
    dv.setUint32(off + 4, dv.getUint32(off + 8, true), true);
    dv.setUint32(off + 8, a, true);
  });
  const img = readImage(swapped);
  t.throws(() => verifyImage(img), { message: 'IPv4 range 2 does not start above range 1' });
  t.throws(() => openLocationDb(img, 'typescript'), { message: 'IPv4 range 2 does not start above range 1' });
  t.throws(() => openLocationDb(readImage(swapped), 'native'), { message: 'compiled location file: v4 range starts do not ascend' });
});

test('a location record pointing outside the string pool fails the load with both implementations', (t) => {
  const out = tempFile('', '.gdb');
  execFileSync(process.execPath, [cli, 'geo', 'build', '-o', out, `netscaler:${join(fixtures, 'netscaler.csv')}`]);
  for (const q of [0, 5]) {
    const bytes = new Uint8Array(readFileSync(out));
    const image = readImage(bytes);
    image.records[3 * RECORD_WORDS + q] = image.pool.length;
    for (const impl of ['native', 'typescript'] as const) {
      t.throws(
        () => openLocationDb(readImage(bytes), impl),
        { instanceOf: ImageError, message: 'location 3 points outside the string pool' },
        `${impl}, qualifier ${q}`,
      );
    }
  }
});

test('gslbd geo build -c CONFIG (no -o): writes geo.compiled when it is missing or older than geo.sources, else says it is up to date', (t) => {
  const csv = tempFile('10.0.0.0,10.255.255.255,,NL\n');
  const config = tempFile(
    `zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]\ngeo:\n  compiled: cache.gdb\n  sources: [{ format: netscaler, path: ${basename(csv)} }]\n`,
    '.yaml',
  );
  const cache = join(dirname(config), 'cache.gdb');
  const build = (...args: string[]) => gslbd('geo', 'build', '-c', config, ...args);
  const first = build();
  t.is(first.status, 0, first.stderr);
  t.regex(first.stdout, /cache\.gdb: built \(missing\), \d+ bytes, \d+ locations, \d+ IPv4 \+ \d+ IPv6 ranges \(\d+ ms\)\n$/);
  t.regex(build().stdout, /cache\.gdb: up to date with its sources, /);
  t.regex(build('--force').stdout, /cache\.gdb: built \(forced\), /);
  writeFileSync(csv, '10.0.0.0,10.255.255.255,,DE\n');
  t.regex(build().stdout, /cache\.gdb: built \(sources changed\), /);
  t.is((JSON.parse(gslbd('geo', 'lookup', '10.1.1.1', '-f', cache).stdout) as { location: string }).location, 'EU.DE');
  const usage = build('--lenient');
  t.is(usage.status, 1);
  t.regex(usage.stderr, /--lenient needs --output/);
  const noCache = tempFile('zones: [{ name: example.test, soa: { mname: ns1.example.test, rname: h.example.test }, ns: [ns1.example.test] }]\n', '.yaml');
  const none = gslbd('geo', 'build', '-c', noCache);
  t.is(none.status, 1);
  t.regex(none.stderr, /needs both compiled .* and sources/);
});
