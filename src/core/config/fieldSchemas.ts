import { isIP } from 'node:net';
import { z } from 'zod';
import { configuredName } from '../dns/name.js';
import { canonicalIpText } from '../net/ipAddress.js';
import { parseDottedLocation } from '../location/location.js';

/**
 * Field schemas shared by the configuration sections. Each one validates and normalises a value
 * so behaviour code never sees raw text (names are canonical, locations are qualifier tuples).
 */

/** A TTL in seconds, 0 … 2^31 − 1 (RFC 2181 §8: values with the top bit set are invalid). */
export const ttlSchema = z.number().int().min(0).max(2147483647);

/** A TCP/UDP port. */
export const portSchema = z.number().int().min(1).max(65535);

/** A port to listen on; 0 lets the system pick a free one (the bound port is logged in "gslbd up"). */
export const listenPortSchema = z.number().int().min(0).max(65535);

/**
 * An IPv4 or IPv6 address, normalised to its canonical spelling ({@link canonicalIpText}, RFC 5952):
 * behaviour code compares addresses as strings (check ids, endpoint keys, tiers), so
 * `0:0:0:0:0:0:0:1` and `::1` must be one value.
 */
export const ipSchema = z
  .string()
  .refine((s) => isIP(s) !== 0 && !s.includes('%'), { message: 'expected an IPv4 or IPv6 address' })
  .transform(canonicalIpText);

/** A domain name (absolute; trailing dot optional; Unicode allowed), normalised to canonical form. */
export const domainNameSchema = z.string().transform((s, ctx) => {
  try {
    return configuredName(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/** A location in dotted qualifier notation (`Europe.UK`, `NA.US.*.*`), normalised to six qualifiers. */
export const locationSchema = z.string().transform((s, ctx) => {
  try {
    return parseDottedLocation(s);
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: `location "${s}" ${(e as Error).message}` });
    return z.NEVER;
  }
});

/** Latitude in degrees. */
export const latitudeSchema = z.number().min(-90).max(90);
/** Longitude in degrees. */
export const longitudeSchema = z.number().min(-180).max(180);
