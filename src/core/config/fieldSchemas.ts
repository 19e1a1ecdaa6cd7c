import { isIP } from 'node:net';
import { z } from 'zod';
import { configuredName } from '../dns/name.js';
import { canonicalIpText, formatIp, parseCidr } from '../net/ipAddress.js';
import type { SubnetConfig } from '../net/subnet.js';
import { parseDottedLocation } from '../location/location.js';

/**
 * Field schemas shared by the configuration sections. Each one validates and normalises a value
 * so behaviour code never sees raw text (names are canonical, locations are qualifier tuples).
 */

/** TTL seconds, 0 … 2^31 − 1 (RFC 2181 §8: values with the top bit set are invalid). */
const ttlSeconds = z.number().int().min(0).max(2147483647);

/** Seconds per BIND TTL unit (BIND 9's `ttl` syntax: `1w2d3h4m5s`, case-insensitive). */
const TTL_UNITS: Readonly<Record<string, number>> = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 };

/**
 * A TTL: seconds as a number, or with BIND's units as text (`1h`, `1h30m`, `2d`, `300`), as
 * operators coming from zone files write them; normalised to seconds, 0 … 2^31 − 1.
 */
export const ttlSchema = z.union([
  ttlSeconds,
  z
    .string()
    .regex(/^(\d+[wdhms]?)+$/i, { message: 'expected seconds, or a TTL with units such as 1h, 1h30m, 2d (w, d, h, m, s)' })
    .transform((text) => [...text.toLowerCase().matchAll(/(\d+)([wdhms]?)/g)].reduce((sum, [, n, unit]) => sum + Number(n) * (TTL_UNITS[unit || 's'] ?? 1), 0))
    .pipe(ttlSeconds),
]);

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

/** `address/len` (a bare address is a host prefix); host bits beyond the length are an error. */
export const subnetSchema = z.string().transform((s, ctx): SubnetConfig => {
  try {
    const p = parseCidr(s.trim());
    return { text: `${formatIp(p.address)}/${p.prefix}`, address: p.address, prefix: p.prefix };
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});
