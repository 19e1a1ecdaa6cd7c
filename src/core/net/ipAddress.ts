import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * An IPv4 or IPv6 address as unsigned 32-bit words, most significant first.
 *
 * One monomorphic shape for both families keeps the query path free of type checks: an IPv4
 * address uses `w0` only (the others are 0). IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are
 * always stored as IPv4, with `mapped` set so a reply can echo the original family (RFC 7871 §6).
 */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly w0: number;
  readonly w1: number;
  readonly w2: number;
  readonly w3: number;
  /** True when the address arrived as IPv4-mapped IPv6 and was folded to IPv4. */
  readonly mapped: boolean;
}

/** An address with a prefix length in bits of its own family (0–32 or 0–128). */
export interface IpPrefix {
  readonly address: IpAddress;
  readonly prefix: number;
}

/** Number of address bits of a family: 32 or 128. */
export function familyBits(family: 4 | 6): 32 | 128 {
  return family === 4 ? 32 : 128;
}

/** Builds an IPv4 address from its 32-bit unsigned value. */
export function ipv4(value: number): IpAddress {
  return { family: 4, w0: value >>> 0, w1: 0, w2: 0, w3: 0, mapped: false };
}

/** Builds an IPv6 address from four 32-bit words; folds `::ffff:0:0/96` to IPv4. */
export function ipv6(w0: number, w1: number, w2: number, w3: number): IpAddress {
  if (w0 === 0 && w1 === 0 && w2 === 0xffff) {
    return { family: 4, w0: w3 >>> 0, w1: 0, w2: 0, w3: 0, mapped: true };
  }
  return { family: 6, w0: w0 >>> 0, w1: w1 >>> 0, w2: w2 >>> 0, w3: w3 >>> 0, mapped: false };
}

const IPV4_SUFFIX = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/;

/**
 * Parses an address in presentation form (`192.0.2.1`, `2001:db8::1`, `::ffff:192.0.2.1`).
 * @throws Error naming the text when it is not an IPv4 or IPv6 address.
 */
export function parseIp(text: string): IpAddress {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    const b = ipaddr.IPv4.parse(text).octets;
    return ipv4(((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0);
  }
  // ipaddr.js reads `::a.b.c.d` (IPv4-compatible, RFC 4291 §2.5.5.1) as `::ffff:a.b.c.d`; an
  // embedded IPv4 suffix is rewritten as two hex groups first so it keeps its real bits.
  let hex = text;
  const embedded = IPV4_SUFFIX.exec(text);
  if (embedded) {
    if (!ipaddr.IPv4.isValidFourPartDecimal(embedded[2]!)) throw new Error(`"${text}" is not an IPv4 or IPv6 address`);
    const o = ipaddr.IPv4.parse(embedded[2]!).octets;
    hex = `${embedded[1]}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  if (!ipaddr.IPv6.isValid(hex) || hex.includes('%')) {
    throw new Error(`"${text}" is not an IPv4 or IPv6 address`);
  }
  const p = ipaddr.IPv6.parse(hex).parts;
  return ipv6((p[0]! << 16) | p[1]!, (p[2]! << 16) | p[3]!, (p[4]! << 16) | p[5]!, (p[6]! << 16) | p[7]!);
}

/**
 * Parses `address/prefix` (or a bare address, meaning a host prefix). An IPv4-mapped IPv6
 * prefix of length ≥ 96 becomes the IPv4 prefix `length - 96`.
 * @throws Error when the address or the length is invalid, or host bits are set.
 */
export function parseCidr(text: string): IpPrefix {
  const slash = text.indexOf('/');
  const address = parseIp(slash < 0 ? text : text.slice(0, slash));
  const bits = address.mapped ? 128 : familyBits(address.family);
  let prefix: number = bits;
  if (slash >= 0) {
    const len = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(len) || Number(len) > bits) {
      throw new Error(`"${text}" has an invalid prefix length (0–${bits})`);
    }
    prefix = Number(len);
  }
  if (address.mapped) {
    if (prefix < 96) throw new Error(`"${text}": an IPv4-mapped prefix must be /96 or longer`);
    prefix -= 96;
  }
  if (!sameAddress(maskAddress(address, prefix), address)) {
    throw new Error(`"${text}" has host bits set beyond /${prefix}`);
  }
  return { address, prefix };
}

/** Keeps the first `prefix` bits of an address and zeroes the rest. */
export function maskAddress(a: IpAddress, prefix: number): IpAddress {
  if (a.family === 4) return { ...a, w0: (a.w0 & maskWord(prefix)) >>> 0 };
  return {
    ...a,
    w0: (a.w0 & maskWord(prefix)) >>> 0,
    w1: (a.w1 & maskWord(prefix - 32)) >>> 0,
    w2: (a.w2 & maskWord(prefix - 64)) >>> 0,
    w3: (a.w3 & maskWord(prefix - 96)) >>> 0,
  };
}

/** Network mask of one 32-bit word when `bits` of it (clamped to 0–32) are kept. */
export function maskWord(bits: number): number {
  if (bits <= 0) return 0;
  if (bits >= 32) return 0xffffffff;
  return (0xffffffff << (32 - bits)) >>> 0;
}

/** True when both addresses have the same family and bits. */
export function sameAddress(a: IpAddress, b: IpAddress): boolean {
  return a.family === b.family && a.w0 === b.w0 && a.w1 === b.w1 && a.w2 === b.w2 && a.w3 === b.w3;
}

/** Presentation form; an IPv4 address is printed dotted even when it arrived mapped. */
export function formatIp(a: IpAddress): string {
  if (a.family === 4) {
    return `${a.w0 >>> 24}.${(a.w0 >>> 16) & 255}.${(a.w0 >>> 8) & 255}.${a.w0 & 255}`;
  }
  const parts = [a.w0 >>> 16, a.w0 & 0xffff, a.w1 >>> 16, a.w1 & 0xffff, a.w2 >>> 16, a.w2 & 0xffff, a.w3 >>> 16, a.w3 & 0xffff];
  return ipaddr.fromByteArray(parts.flatMap((p) => [p >>> 8, p & 255])).toString();
}

/**
 * The one spelling of an address literal, so that addresses from the configuration, an API or a
 * socket compare as strings: IPv4 as dotted decimal, IPv6 in RFC 5952 §4 form (lower case,
 * no leading zeros, the longest run of two or more zero groups as `::`), IPv4-mapped IPv6 as
 * `::ffff:a.b.c.d` (RFC 5952 §5; the family is kept, unlike {@link parseIp}, because an
 * endpoint's family decides whether it answers A or AAAA). `0:0:0:0:0:0:0:1`, `0::1` and `::1`
 * all give `::1`; `2001:DB8:0::0001` gives `2001:db8::1`; canonical text comes back unchanged.
 * @throws Error naming the text when it is not an IPv4 or IPv6 address.
 */
export function canonicalIpText(text: string): string {
  const a = parseIp(text);
  return a.mapped ? `::ffff:${formatIp(a)}` : formatIp(a);
}

/**
 * `text` in {@link canonicalIpText} spelling when it is an IPv4 or IPv6 literal without a zone
 * index, else `text` unchanged: for fields that hold an address or a name (tier entries, the
 * address part of an endpoint key). Never throws.
 */
export function canonicalIfIpText(text: string): string {
  return isIP(text) !== 0 && !text.includes('%') ? canonicalIpText(text) : text;
}

/**
 * Reads an address from the network-order bytes `bytes[start..end)`, as carried in an ECS option
 * (RFC 7871 §6): only the first `ceil(prefix/8)` bytes are present, the rest are zero. Reads in
 * place, never at or past `end` (query paths pass a frame and offsets instead of making a view:
 * a Buffer view costs ~0.1 µs, and reads past a typed array's end take V8's slow path).
 */
export function addressFromBytes(family: 4 | 6, bytes: Uint8Array, start = 0, end = bytes.length): IpAddress {
  if (family === 4) return ipv4(wordAt(bytes, start, end));
  return ipv6(wordAt(bytes, start, end), wordAt(bytes, start + 4, end), wordAt(bytes, start + 8, end), wordAt(bytes, start + 12, end));
}

/** The big-endian 32-bit word at `at`; bytes at or past `end` read as zero. */
function wordAt(bytes: Uint8Array, at: number, end: number): number {
  if (at + 4 <= end) return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
  let w = 0;
  for (let i = at; i < at + 4; i++) w = (w << 8) | (i < end ? bytes[i]! : 0);
  return w >>> 0;
}

/** Network-order bytes of an address in its original family (mapped IPv4 gives 16 bytes). */
export function addressToBytes(a: IpAddress): Uint8Array {
  const words = a.family === 4 && !a.mapped ? [a.w0] : a.family === 4 ? [0, 0, 0xffff, a.w0] : [a.w0, a.w1, a.w2, a.w3];
  const out = new Uint8Array(words.length * 4);
  words.forEach((w, i) => {
    out[i * 4] = w >>> 24;
    out[i * 4 + 1] = (w >>> 16) & 255;
    out[i * 4 + 2] = (w >>> 8) & 255;
    out[i * 4 + 3] = w & 255;
  });
  return out;
}
