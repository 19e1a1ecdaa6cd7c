import test from 'ava';
import { readFileSync } from 'node:fs';
import { Reader } from 'mmdb-lib';
import { formatIp, ipv4, ipv6, type IpAddress } from '../../src/core/net/ipAddress.js';
import { locationFromRecord } from '../../src/capabilities/geo/mmdbSource.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { unpackId, unpackPrefix } from '../../src/core/lpm/rangeTable.js';
import { compareDbs, insideNetworks, uniformV4, uniformV6 } from './addressSets.js';
import { seededUint32 } from '../support/seededRandom.js';
import { CITY_MMDB, readCityImage } from './cityImage.js';

// GeoLite2-City (3.7M IPv4 + 2.4M IPv6 networks, merged to 2.6M + 1.1M ranges), compiled by
// test/setup.sh. The native addon and the TypeScript reference read the same bytes; they must
// agree on every address, in location id and prefix length, through lookup() and lookupBatch().
const image = readCityImage();
const native = openLocationDb(image, 'native').db;
const reference = openLocationDb(image, 'typescript').db;

test('native = TypeScript on 10^6 uniform IPv4 addresses', (t) => {
  const r = compareDbs(native, reference, 4, uniformV4(seededUint32(1), 1_000_000));
  t.is(r.mismatches, 0, r.examples.join('\n'));
});

test('native = TypeScript on 10^6 IPv6 addresses (2000::/3 and the whole space)', (t) => {
  const r = compareDbs(native, reference, 6, uniformV6(seededUint32(2), 1_000_000));
  t.is(r.mismatches, 0, r.examples.join('\n'));
});

test('native = TypeScript on 2×10^5 addresses inside real networks, each family', (t) => {
  const rand = seededUint32(3);
  for (const family of [4, 6] as const) {
    const r = compareDbs(native, reference, family, insideNetworks(image, family, rand, 200_000));
    t.is(r.mismatches, 0, r.examples.join('\n'));
  }
});

// An oracle that shares none of our code paths: mmdb-lib's own tree walk over the original files.
// Same location; our prefix never longer than mmdb's network (merging only widens blocks).
test('independent oracle: mmdb-lib on the source .mmdb files gives the same locations', (t) => {
  const rand = seededUint32(4);
  for (const family of [4, 6] as const) {
    const reader = new Reader<Record<string, unknown>>(readFileSync(CITY_MMDB[family]));
    const stride = family === 4 ? 1 : 4;
    const addrs = insideNetworks(image, family, rand, 20_000);
    let checked = 0;
    let widened = 0;
    for (let i = 0; i < addrs.length / stride; i++) {
      const a: IpAddress = family === 4 ? ipv4(addrs[i]!) : ipv6(addrs[4 * i]!, addrs[4 * i + 1]!, addrs[4 * i + 2]!, addrs[4 * i + 3]!);
      const [record, mmdbPrefix] = reader.getWithPrefixLength(formatIp(a));
      const packed = native.lookup(a);
      const ours = native.location(unpackId(packed));
      const theirs = record ? locationFromRecord(record) : undefined;
      if (unpackId(packed) === 0) t.is(theirs, undefined, formatIp(a));
      else t.deepEqual(ours, theirs, formatIp(a));
      if (unpackPrefix(packed) > mmdbPrefix) t.fail(`${formatIp(a)}: our /${unpackPrefix(packed)} is longer than mmdb's /${mmdbPrefix}`);
      if (unpackPrefix(packed) < mmdbPrefix) widened++;
      checked++;
    }
    t.is(checked, 20_000);
    // The mmdb writer merges most siblings already; merging across non-sibling neighbours still
    // widens some blocks (31 of 20,000 IPv4 samples with seed 4).
    t.true(widened > 0, `IPv${family}: no block wider than mmdb's network`);
  }
});
