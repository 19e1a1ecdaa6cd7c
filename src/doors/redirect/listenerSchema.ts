import { z } from 'zod';
import { domainNameSchema, ipSchema, listenPortSchema } from '../../core/config/fieldSchemas.js';
import { canonicalName } from '../../core/dns/name.js';
import { formatIp, parseCidr } from '../../core/net/ipAddress.js';
import { nameSchema } from '../../pipeline/config/topologySchema.js';

/**
 * A site's base URL (`urls.<dc>`): `http` or `https`, a host, an optional port and path; no user
 * name or password, no query, no fragment (the request's path and query are appended to it).
 * Normalised to origin + path without a trailing `/` (`https://denver.example.com/app/` →
 * `https://denver.example.com/app`), so appending a path that starts with `/` can only extend it.
 */
export const baseUrlSchema = z.string().transform((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an absolute URL` });
    return z.NEVER;
  }
  const problems: string[] = [];
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`its scheme is ${url.protocol.slice(0, -1)}, not http or https`);
  if (url.username !== '' || url.password !== '') problems.push('it carries a user name or password');
  if (text.includes('?') || text.includes('#')) problems.push("it has a query or fragment (the request's path and query are appended to it)");
  for (const p of problems) ctx.addIssue({ code: 'custom', message: `base URL "${text}": ${p}` });
  return problems.length > 0 ? z.NEVER : `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
});

/** A proxy subnet whose `X-Forwarded-For` is believed, in canonical `address/prefix` text. */
export const trustedProxySchema = z.string().transform((text, ctx) => {
  try {
    const p = parseCidr(text);
    return `${formatIp(p.address)}/${p.prefix}`;
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: (e as Error).message });
    return z.NEVER;
  }
});

/** One redirected host name: the GSLB record that decides and each data center's base URL. */
export const redirectHostSchema = z.strictObject({
  /** The name clients ask for (the `Host` header or the authority of an absolute request target); no wildcard. */
  host: domainNameSchema
    .refine((h) => !h.includes('*'), { message: 'a redirect host is one name, not a wildcard' })
    .describe('Host name clients ask for (Host header or absolute request target); one name, no wildcard.'),
  /** The GSLB record (its A record for IPv4 clients, AAAA for IPv6, or whichever of the two exists) whose policy chooses the data center. */
  record: domainNameSchema.describe('GSLB record (its A or AAAA) whose policy chooses the data center for this host.'),
  /** Base URL per data center name. */
  urls: z
    .record(nameSchema, baseUrlSchema)
    .refine((u) => Object.keys(u).length > 0, { message: 'give the base URL of at least one data center' })
    .describe('Base URL (http or https, no query or fragment) per data center name; the request path and query are appended.'),
});

/** Redirect statuses: 302 and 307 (no client keeps them); 301 and 308 are accepted with a warning at start-up. */
export const redirectStatusSchema = z.union([z.literal(302), z.literal(307), z.literal(301), z.literal(308)]);

/**
 * `listeners.redirect`: the HTTP redirect front door (docs/PRODUCT.md §6, seed 003). Times in ms,
 * sizes in bytes. `port` defaults to 80, or 443 with `tls` (PEM files relative to the
 * configuration file). Limits: `maxConnections` open connections (more are closed at once),
 * `maxRequestsPerConnection` requests on one keep-alive connection, `requestTimeoutMs` to receive
 * a whole request (headers included) and to finish a TLS handshake, `idleTimeoutMs` between two
 * requests of one connection, `maxHeaderBytes` of request headers (431 beyond).
 */
export const redirectListenerSchema = z
  .strictObject({
    address: ipSchema.describe('IPv4 or IPv6 address the HTTP redirect listener binds (restart needed).'),
    port: listenPortSchema.optional().describe('Port the redirect listener binds; default 80, or 443 with tls (restart needed).'),
    tls: z
      .strictObject({
        certFile: z.string().min(1).describe('PEM certificate file of the redirect HTTPS listener, relative to the configuration file.'),
        keyFile: z.string().min(1).describe('PEM private key file of the redirect HTTPS listener, relative to the configuration file.'),
      })
      .optional()
      .describe('Serve the redirects over HTTPS with these PEM files (restart needed).'),
    status: redirectStatusSchema.default(302).describe('HTTP redirect status: 302 or 307, or 301/308 with a warning at start-up; default 302.'),
    trustedProxies: z
      .array(trustedProxySchema)
      .default([])
      .describe('Proxy subnets (address/prefix) whose X-Forwarded-For gives the client address; default none.'),
    hosts: z.array(redirectHostSchema).min(1).describe('The redirected host names, each with its GSLB record and per-data-center base URLs.'),
    maxConnections: z.number().int().min(1).max(100_000).default(1024).describe('Open redirect connections at most; more are closed at once; default 1024.'),
    maxRequestsPerConnection: z.number().int().min(1).max(100_000).default(100).describe('Requests served on one keep-alive connection; default 100.'),
    requestTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(600_000)
      .default(10_000)
      .describe('Time in ms to receive a whole request (headers included) and to finish a TLS handshake; default 10000.'),
    idleTimeoutMs: z.number().int().min(100).max(600_000).default(5000).describe('Time in ms allowed between two requests of one connection; default 5000.'),
    maxHeaderBytes: z.number().int().min(1024).max(65_536).default(8192).describe('Request header size limit in bytes (431 beyond); default 8192.'),
    /** Fraction (0–1) of requests logged, client addresses truncated to /24 and /48. */
    logSampleRate: z
      .number()
      .min(0)
      .max(1)
      .default(0)
      .describe('Fraction (0–1) of redirect requests logged, client addresses truncated to /24 and /48; default 0.'),
  })
  .superRefine(checkHosts);

export type RedirectListenerConfig = z.output<typeof redirectListenerSchema>;
export type RedirectHostConfig = z.output<typeof redirectHostSchema>;

/**
 * Each host once; no base URL whose host is itself a redirect host, on any port: the redirect
 * would come back to this door (or another engine's with the same hosts) and loop.
 */
function checkHosts(cfg: { readonly hosts: readonly RedirectHostConfig[] }, ctx: z.RefinementCtx): void {
  const hosts = new Set<string>();
  cfg.hosts.forEach((h, i) => {
    if (hosts.has(h.host)) ctx.addIssue({ code: 'custom', path: ['hosts', i, 'host'], message: `"${h.host}" is listed twice` });
    hosts.add(h.host);
  });
  cfg.hosts.forEach((h, i) => {
    for (const [dc, url] of Object.entries(h.urls)) {
      const target = canonicalName(new URL(url).hostname);
      if (hosts.has(target)) {
        ctx.addIssue({ code: 'custom', path: ['hosts', i, 'urls', dc], message: `"${url}" points at "${target}", a redirect host itself: clients would loop` });
      }
    }
  });
}
