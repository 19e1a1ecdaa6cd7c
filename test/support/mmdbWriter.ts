import { writeFileSync } from 'node:fs';
import { parseCidr, type IpAddress } from '../../src/core/net/ipAddress.js';

/**
 * A minimal MaxMind DB (format 2.0) writer for test fixtures: small location files generated at
 * test time instead of committed data (the briefing forbids committing `.mmdb` files).
 *
 * It writes what `src/capabilities/geo/mmdbSource.ts` and `mmdb-lib` read: a binary search tree with 24-bit
 * records, the 16-byte separator, a data section of maps/strings/doubles/unsigned integers, and
 * the metadata section (MaxMind DB spec, https://maxmind.github.io/MaxMind-DB/). Networks may
 * nest: a more specific network overrides the enclosing one, as in real databases.
 */

/** A value the writer can encode: strings, numbers (integers ≥ 0 as uint32, others as double), maps. */
export type MmdbValue = string | number | boolean | { readonly [key: string]: MmdbValue } | readonly MmdbValue[];

/** One network of the file: `cidr` (IPv4 or IPv6; IPv4 goes to `::a.b.c.d/96+n` in an IPv6 file). */
export interface MmdbNetwork {
  readonly cidr: string;
  readonly record: { readonly [key: string]: MmdbValue };
}

/** An ip-location-db style record (the fields the quickstart data has). */
export function ipLocationRecord(country: string, state1 = '', city = '', latitude?: number, longitude?: number): Record<string, MmdbValue> {
  const r: Record<string, MmdbValue> = { country_code: country, state1, city };
  if (latitude !== undefined && longitude !== undefined) {
    r.latitude = latitude;
    r.longitude = longitude;
  }
  return r;
}

interface TrieNode {
  kind: 'node';
  children: [Child, Child];
}
interface TrieLeaf {
  kind: 'leaf';
  record: number;
}
type Child = TrieNode | TrieLeaf | null;

/**
 * Builds a MaxMind DB file image. `ipVersion` 4 holds IPv4 networks only; 6 holds both (IPv4 in
 * `::/96`). Networks are inserted shortest prefix first, so nested ones override their parents.
 * @throws Error when a CIDR is invalid or an IPv6 network is given to an IPv4 file.
 */
export function buildMmdb(ipVersion: 4 | 6, networks: readonly MmdbNetwork[]): Buffer {
  const data = new DataSection();
  const root: TrieNode = { kind: 'node', children: [null, null] };
  const parsed = networks.map((n) => {
    const p = parseCidr(n.cidr);
    if (ipVersion === 4 && p.address.family === 6) throw new Error(`${n.cidr}: IPv6 network in an IPv4 file`);
    const bits = treeBits(p.address, ipVersion);
    const length = ipVersion === 6 && p.address.family === 4 ? 96 + p.prefix : p.prefix;
    return { bits, length, record: data.add(n.record) };
  });
  parsed.sort((a, b) => a.length - b.length);
  for (const p of parsed) insert(root, p.bits, p.length, p.record);

  // Number the nodes breadth first; children point to higher numbers.
  const order: TrieNode[] = [];
  const numbers = new Map<TrieNode, number>();
  const queue: TrieNode[] = [root];
  while (queue.length > 0) {
    const n = queue.shift()!;
    numbers.set(n, order.length);
    order.push(n);
    for (const c of n.children) if (c?.kind === 'node') queue.push(c);
  }
  const nodeCount = order.length;
  const tree = Buffer.alloc(nodeCount * 6);
  const value = (c: Child): number => {
    if (c === null) return nodeCount;
    if (c.kind === 'leaf') return nodeCount + 16 + c.record;
    return numbers.get(c)!;
  };
  order.forEach((n, i) => {
    tree.writeUIntBE(value(n.children[0]), i * 6, 3);
    tree.writeUIntBE(value(n.children[1]), i * 6 + 3, 3);
  });

  const metadata = encode({
    node_count: nodeCount,
    record_size: 24,
    ip_version: ipVersion,
    database_type: 'gslbd-test',
    languages: ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: 1700000000,
    description: { en: 'gslbd test fixture' },
  });
  const marker = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com')]);
  return Buffer.concat([tree, Buffer.alloc(16), data.bytes(), marker, metadata]);
}

/** Writes {@link buildMmdb}'s image to `path`. */
export function writeMmdb(path: string, ipVersion: 4 | 6, networks: readonly MmdbNetwork[]): void {
  writeFileSync(path, buildMmdb(ipVersion, networks));
}

/** The address bits along the tree path, most significant first. */
function treeBits(a: IpAddress, ipVersion: 4 | 6): (bit: number) => 0 | 1 {
  const words = ipVersion === 4 ? [a.w0] : a.family === 4 ? [0, 0, 0, a.w0] : [a.w0, a.w1, a.w2, a.w3];
  return (bit) => ((words[bit >>> 5]! >>> (31 - (bit & 31))) & 1) as 0 | 1;
}

function insert(root: TrieNode, bit: (i: number) => 0 | 1, length: number, record: number): void {
  if (length === 0) throw new Error('a network of length 0 cannot be stored in a MaxMind DB tree');
  let node = root;
  for (let depth = 0; depth < length - 1; depth++) {
    const b = bit(depth);
    let next = node.children[b];
    if (next === null || next.kind === 'leaf') {
      // Descend into a leaf by splitting it: both halves keep its record.
      const split: TrieNode = { kind: 'node', children: [next, next] };
      node.children[b] = split;
      next = split;
    }
    node = next;
  }
  node.children[bit(length - 1)] = { kind: 'leaf', record };
}

/** The data section: each distinct record encoded once. */
class DataSection {
  private readonly parts: Buffer[] = [];
  private size = 0;
  private readonly offsets = new Map<string, number>();

  add(record: MmdbValue): number {
    const key = JSON.stringify(record);
    const known = this.offsets.get(key);
    if (known !== undefined) return known;
    const bytes = encode(record);
    const offset = this.size;
    this.parts.push(bytes);
    this.size += bytes.length;
    this.offsets.set(key, offset);
    return offset;
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** Encodes one value in the MaxMind DB data format (no pointers). */
function encode(v: MmdbValue): Buffer {
  if (typeof v === 'string') {
    const bytes = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof v === 'boolean') return control(14, v ? 1 : 0);
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) {
      const bytes: number[] = [];
      for (let x = v; x > 0; x = Math.floor(x / 256)) bytes.unshift(x % 256);
      return Buffer.concat([control(6, bytes.length), Buffer.from(bytes)]);
    }
    const d = Buffer.alloc(8);
    d.writeDoubleBE(v);
    return Buffer.concat([control(3, 8), d]);
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)]);
  const entries = Object.entries(v as Record<string, MmdbValue>);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])]);
}

/** Control byte(s) for a type and size (types above 7 use the extended form). */
function control(type: number, size: number): Buffer {
  const head: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 285) {
    sizeBits = 29;
    extra.push(size - 29);
  } else if (size < 65821) {
    sizeBits = 30;
    extra.push((size - 285) >> 8, (size - 285) & 255);
  } else {
    throw new Error('value too large for the test writer');
  }
  if (type <= 7) head.push((type << 5) | sizeBits);
  else head.push(sizeBits, type - 7);
  return Buffer.from([...head, ...extra]);
}
