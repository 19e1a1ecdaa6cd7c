import type { LocationImage } from '../../src/capabilities/geo/compiledImage.js';
import type { LocationDb } from '../../src/core/location/locationDb.js';
import { ipv4, ipv6 } from '../../src/core/net/ipAddress.js';

/**
 * Address sets and comparison helpers shared by the differential tests, the sanitizer run and the
 * benchmark. Everything is seeded: the same seed gives the same addresses.
 */

/** `n` IPv4 addresses uniform over the whole space. */
export function uniformV4(rand: () => number, n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = rand();
  return out;
}

/** `n` IPv6 addresses (4 words each): three in four uniform over 2000::/3 (where data is), the rest over the whole space. */
export function uniformV6(rand: () => number, n: number): Uint32Array {
  const out = new Uint32Array(4 * n);
  for (let i = 0; i < n; i++) {
    for (let w = 0; w < 4; w++) out[4 * i + w] = rand();
    if (i % 4 !== 3) out[4 * i] = (0x20000000 | (out[4 * i]! & 0x1fffffff)) >>> 0;
  }
  return out;
}

/**
 * `n` addresses each drawn uniformly inside a uniformly chosen range that has a location: this
 * weights small networks, the worst case for lookups (docs/notes/lpm.md "v4s"/"v6s").
 */
export function insideNetworks(image: LocationImage, family: 4 | 6, rand: () => number, n: number): Uint32Array {
  const t = family === 4 ? image.v4 : image.v6;
  const stride = family === 4 ? 1 : 4;
  const located: number[] = [];
  for (let i = 0; i < t.ids.length; i++) if (t.ids[i] !== 0) located.push(i);
  const out = new Uint32Array(stride * n);
  const start = (i: number): bigint => {
    let v = 0n;
    for (let w = 0; w < stride; w++) v = (v << 32n) | BigInt(t.starts[i * stride + w]!);
    return v;
  };
  const spaceEnd = family === 4 ? 1n << 32n : 1n << 128n;
  for (let k = 0; k < n; k++) {
    const i = located[rand() % located.length]!;
    const lo = start(i);
    const hi = i + 1 < t.ids.length ? start(i + 1) : spaceEnd;
    let r = 0n;
    for (let w = 0; w < stride; w++) r = (r << 32n) | BigInt(rand());
    const a = lo + (r % (hi - lo));
    for (let w = 0; w < stride; w++) out[k * stride + w] = Number((a >> BigInt(32 * (stride - 1 - w))) & 0xffffffffn);
  }
  return out;
}

/**
 * `n` addresses with Zipf(s = 1) popularity over `distinct` fixed addresses drawn inside
 * networks: closer to resolver traffic (the top 1% of addresses get most queries).
 */
export function zipfInsideNetworks(image: LocationImage, family: 4 | 6, rand: () => number, n: number, distinct = 100_000): Uint32Array {
  const stride = family === 4 ? 1 : 4;
  const pool = insideNetworks(image, family, rand, distinct);
  const cdf = new Float64Array(distinct);
  let sum = 0;
  for (let k = 0; k < distinct; k++) cdf[k] = sum += 1 / (k + 1);
  const out = new Uint32Array(stride * n);
  for (let i = 0; i < n; i++) {
    const u = (rand() / 2 ** 32) * sum;
    let lo = 0;
    let hi = distinct - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    for (let w = 0; w < stride; w++) out[i * stride + w] = pool[lo * stride + w]!;
  }
  return out;
}

/** The result of comparing two databases on one address set. */
export interface Comparison {
  readonly family: 4 | 6;
  readonly addresses: number;
  readonly mismatches: number;
  /** The first few mismatches, `address: a=… b=…`. */
  readonly examples: string[];
}

/**
 * Looks every address up in both databases, one `lookup(IpAddress)` call each (the query path)
 * and through `lookupBatch` of each, and counts addresses where any of the four answers differ in
 * location id or prefix length.
 */
export function compareDbs(a: LocationDb, b: LocationDb, family: 4 | 6, addresses: Uint32Array): Comparison {
  const stride = family === 4 ? 1 : 4;
  const n = addresses.length / stride;
  const batch = (db: LocationDb): { ids: Uint32Array; prefixes: Uint8Array } => {
    const ids = new Uint32Array(n);
    const prefixes = new Uint8Array(n);
    if (!db.lookupBatch) throw new Error(`${db.implementation} has no lookupBatch`);
    db.lookupBatch(family, addresses, ids, prefixes);
    return { ids, prefixes };
  };
  const ba = batch(a);
  const bb = batch(b);
  let mismatches = 0;
  const examples: string[] = [];
  for (let i = 0; i < n; i++) {
    const addr = family === 4 ? ipv4(addresses[i]!) : ipv6(addresses[4 * i]!, addresses[4 * i + 1]!, addresses[4 * i + 2]!, addresses[4 * i + 3]!);
    const pa = a.lookup(addr);
    const pb = b.lookup(addr);
    const fa = ba.ids[i]! * 256 + ba.prefixes[i]!;
    const fb = bb.ids[i]! * 256 + bb.prefixes[i]!;
    if (pa !== pb || fa !== pa || fb !== pa) {
      mismatches++;
      if (examples.length < 5) {
        const words = Array.from(addresses.subarray(i * stride, i * stride + stride), (w) => w.toString(16)).join(':');
        examples.push(`${words}: ${a.implementation}=${pa} ${b.implementation}=${pb} batch ${fa}/${fb}`);
      }
    }
  }
  return { family, addresses: n, mismatches, examples };
}
