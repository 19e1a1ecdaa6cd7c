import { createECDH, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

/**
 * The DNSSEC algorithms gslbd signs with, on Node's own crypto (OpenSSL): 13, ECDSA P-256 with
 * SHA-256 (RFC 6605), and 15, Ed25519 (RFC 8080). Both are the algorithms RFC 8624 §3.1 says
 * signers should use, and both give 64-byte signatures.
 */

/** One algorithm: its number, BIND's mnemonic, and what signing with it needs. */
export interface DnssecAlgorithm {
  /** The algorithm number (IANA "DNS Security Algorithm Numbers"). */
  readonly number: 13 | 15;
  /** BIND's name in `.private` files and `dnssec-keygen -a` (`ECDSAP256SHA256`, `ED25519`). */
  readonly mnemonic: string;
  /** Length (octets) of the private key as gslbd writes it in a `.private` file (base64 of the raw scalar or seed; BIND may write an ECDSA scalar shorter). */
  readonly privateKeyLength: number;
  /**
   * The private key object from the raw private key of a `.private` file.
   * @throws Error when the bytes are not a valid key of this algorithm.
   */
  importPrivate(raw: Buffer): KeyObject;
  /** The DNSKEY public key field of a private key (RFC 6605 §4: x‖y, 64 octets; RFC 8080 §3: 32 octets). */
  publicKeyField(key: KeyObject): Buffer;
  /** A fresh raw private key, as a `.private` file holds it. */
  generate(): Buffer;
  /** The signature of `data` (RFC 6605 §4: r‖s, 64 octets; RFC 8032 Ed25519, 64 octets). */
  sign(key: KeyObject, data: Buffer): Buffer;
  /** True when `signature` is `publicKey`'s signature of `data` (the key-file check and tests). */
  verify(publicKey: Buffer, data: Buffer, signature: Buffer): boolean;
}

const base64url = (b: Buffer): string => b.toString('base64url');

/** ECDSA P-256 with SHA-256 (RFC 6605). */
const ECDSAP256SHA256: DnssecAlgorithm = {
  number: 13,
  mnemonic: 'ECDSAP256SHA256',
  privateKeyLength: 32,
  importPrivate(written) {
    if (written.length === 0 || written.length > 32) throw new Error(`an ECDSA P-256 private key is 1 to 32 octets, not ${written.length}`);
    // BIND writes the scalar as OpenSSL's bignum, without leading zero octets: about one
    // dnssec-keygen key in 256 has 31 octets (RFC 6605 §4's fixed 32 is the DNSKEY's, not the file's).
    const raw = written.length === 32 ? written : Buffer.concat([Buffer.alloc(32 - written.length), written]);
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(raw);
    const point = ecdh.getPublicKey();
    return createPrivateKey({
      key: { kty: 'EC', crv: 'P-256', d: base64url(raw), x: base64url(point.subarray(1, 33)), y: base64url(point.subarray(33, 65)) },
      format: 'jwk',
    });
  },
  publicKeyField(key) {
    const jwk = createPublicKey(key).export({ format: 'jwk' });
    return Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  },
  generate() {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    return Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  },
  sign(key, data) {
    return sign('sha256', data, { key, dsaEncoding: 'ieee-p1363' });
  },
  verify(publicKey, data, signature) {
    const key = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: base64url(publicKey.subarray(0, 32)), y: base64url(publicKey.subarray(32, 64)) },
      format: 'jwk',
    });
    return verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
  },
};

const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** Ed25519 (RFC 8080). */
const ED25519: DnssecAlgorithm = {
  number: 15,
  mnemonic: 'ED25519',
  privateKeyLength: 32,
  importPrivate(raw) {
    if (raw.length !== 32) throw new Error(`an Ed25519 private key is 32 octets, not ${raw.length}`);
    // PKCS #8 for Ed25519 (RFC 8410 §7): a fixed prefix, then the 32-octet seed.
    return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  },
  publicKeyField(key) {
    return Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x!, 'base64url');
  },
  generate() {
    const { privateKey } = generateKeyPairSync('ed25519');
    return Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  },
  sign(key, data) {
    return sign(null, data, key);
  },
  verify(publicKey, data, signature) {
    return verify(null, data, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: base64url(publicKey) }, format: 'jwk' }), signature);
  },
};

/** The algorithms by number. */
export const ALGORITHMS: ReadonlyMap<number, DnssecAlgorithm> = new Map([
  [13, ECDSAP256SHA256],
  [15, ED25519],
]);

/** The algorithm of a number or mnemonic (`13`, `ECDSAP256SHA256`, `15`, `ED25519`, any case), or undefined. */
export function algorithmOf(nameOrNumber: string | number): DnssecAlgorithm | undefined {
  const n = typeof nameOrNumber === 'number' ? nameOrNumber : /^\d+$/.test(nameOrNumber) ? Number(nameOrNumber) : undefined;
  if (n !== undefined) return ALGORITHMS.get(n);
  const upper = (nameOrNumber as string).toUpperCase();
  return [...ALGORITHMS.values()].find((a) => a.mnemonic === upper);
}
