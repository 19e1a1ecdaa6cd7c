import { z } from 'zod';
import { domainNameSchema, ttlSchema } from '../../core/config/fieldSchemas.js';

/** Seconds (an integer ≥ 0). */
const seconds = z.number().int().min(0);

/**
 * One signed zone: which configured zone, the key files that sign it, and what it publishes at
 * the apex. Keys are BIND key pairs named by their base path (`Kexample.test.+013+12345`, with
 * or without `.key` / `.private`), relative to the configuration file.
 */
export const signedZoneSchema = z.strictObject({
  /** A zone of `zones[]`. */
  zone: domainNameSchema.describe('Name of the zone of zones[] to sign.'),
  /** Key pairs: KSKs (flags 257) sign the DNSKEY RRset, ZSKs (256) the rest; one key alone signs everything. */
  keys: z
    .array(z.string().min(1))
    .min(1)
    .describe('BIND key pairs by base path (Kexample.test.+013+12345), relative to the configuration file; KSKs sign DNSKEY, ZSKs the rest.'),
  /** TTL (s) of the DNSKEY, CDS and CDNSKEY RRsets. */
  dnskeyTtl: ttlSchema.default(3600).describe('TTL in seconds of the DNSKEY, CDS and CDNSKEY RRsets; default 3600.'),
  /** Publish CDS and CDNSKEY (RFC 7344) of the KSKs that sign, within their SyncPublish/SyncDelete window when set. */
  cds: z.boolean().default(true).describe('Publish CDS and CDNSKEY (RFC 7344) of the signing KSKs; default true.'),
});

/** How signatures are timed (seconds). Defaults as CoreDNS's `dnssec` plugin: valid 8 days, made afresh 2 days before they expire. */
export const signaturesSchema = z
  .strictObject({
    validity: seconds
      .min(3600)
      .default(8 * 86400)
      .describe('Seconds a signature is valid, at least 3600; default 691200 (8 days).'),
    jitter: seconds.default(6 * 3600).describe('Up to this many seconds taken off each signature expiration at random; default 21600.'),
    refresh: seconds
      .min(60)
      .default(2 * 86400)
      .describe('A signature is made afresh once fewer than this many seconds are left; default 172800 (2 days).'),
    /** At least an hour, for validators whose clocks are behind. */
    inceptionOffset: seconds
      .min(3600)
      .default(3600)
      .describe('Seconds the signature inception lies before now, at least 3600, for validators whose clocks are behind; default 3600.'),
  })
  .refine((s) => s.refresh + s.jitter < s.validity, { message: 'refresh + jitter must be shorter than validity, or signatures would be made afresh at once' });

/** The `dnssec` section. */
export const dnssecSchema = z.strictObject({
  zones: z.array(signedZoneSchema).default([]).describe('The signed zones with their keys; default none.'),
  signatures: signaturesSchema
    .describe("How signatures are timed, in seconds (defaults as CoreDNS's dnssec plugin).")
    .default({ validity: 8 * 86400, jitter: 6 * 3600, refresh: 2 * 86400, inceptionOffset: 3600 }),
  /** Most RRsets whose signatures the cache holds (each ECS variant of an RRset is one). */
  signatureCacheEntries: z
    .number()
    .int()
    .min(1)
    .default(10000)
    .describe('Most RRsets whose signatures the cache holds (each ECS variant of an RRset is one); default 10000.'),
});

export type DnssecConfig = z.output<typeof dnssecSchema>;
export type SignedZoneConfig = z.output<typeof signedZoneSchema>;

/** The `dnssec` key of the configuration root; absent means no zone is signed. */
export const dnssecRootSchema = dnssecSchema.describe('DNSSEC online signing of zones with BIND key pairs; absent, no zone is signed.').default({
  zones: [],
  signatures: { validity: 8 * 86400, jitter: 6 * 3600, refresh: 2 * 86400, inceptionOffset: 3600 },
  signatureCacheEntries: 10000,
});
