import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { ipSchema, listenPortSchema } from '../core/config/fieldSchemas.js';
import { restartOnly } from '../core/config/restartOnly.js';
import type { ListenerSection } from '../core/contracts/frontDoor.js';

/**
 * The admin HTTP listener (loopback by default). Mutating endpoints need `token` (or the token
 * read from `tokenFile`, relative to the configuration file, at least 16 characters) as
 * `Authorization: Bearer <token>`; without one they answer 403. `tls` makes it HTTPS. A reload
 * applies the token; the address, port and TLS files need a restart.
 */
export const adminListenerSchema = z
  .strictObject({
    address: restartOnly(ipSchema, 'the admin socket is opened at start')
      .default('127.0.0.1')
      .describe('Address the admin HTTP listener binds; default 127.0.0.1; other than loopback needs token or tokenFile (restart needed).'),
    port: restartOnly(listenPortSchema, 'the admin socket is opened at start')
      .default(8053)
      .describe('Port the admin HTTP listener binds; 0 lets the system pick one; default 8053 (restart needed).'),
    token: z
      .string()
      .min(16, 'an admin token has at least 16 characters')
      .optional()
      .describe('Bearer token (at least 16 characters) the mutating admin endpoints require; not with tokenFile; applies on reload.'),
    tokenFile: z
      .string()
      .min(1)
      .optional()
      .describe('File holding the admin bearer token, relative to the configuration file; not with token; applies on reload.'),
    /**
     * Serve HTTPS instead of HTTP (agents in other data centers: docs/PRODUCT.md §7): PEM files
     * relative to the configuration file, read at start-up. With `clientCaFile`, every client must
     * present a certificate signed by that CA.
     */
    tls: restartOnly(
      z.strictObject({
        certFile: z.string().min(1).describe('PEM certificate file of the admin HTTPS listener, relative to the configuration file.'),
        keyFile: z.string().min(1).describe('PEM private key file of the admin HTTPS listener, relative to the configuration file.'),
        clientCaFile: z.string().min(1).optional().describe('PEM CA file: when set, every admin client must present a certificate signed by this CA.'),
      }),
      'the certificates are read at start',
    )
      .optional()
      .describe('Serve the admin API over HTTPS with these PEM files, read at start (restart needed).'),
  })
  .refine((a) => a.token === undefined || a.tokenFile === undefined, { message: 'set "token" or "tokenFile", not both' })
  .refine((a) => isLoopback(a.address) || a.token !== undefined || a.tokenFile !== undefined, {
    message: 'an admin listener on an address other than loopback needs "token" or "tokenFile" (or listen on 127.0.0.1 or ::1)',
    path: ['address'],
  });

/** Whether `address` (canonical) is a loopback address: 127.0.0.0/8, ::1, or IPv4-mapped 127.0.0.0/8 (RFC 6890). */
function isLoopback(address: string): boolean {
  return ipaddr.process(address).range() === 'loopback';
}

export type AdminListenerConfig = z.output<typeof adminListenerSchema>;

/** `listeners.admin`: absent means no admin listener. */
export const adminListener = {
  name: 'admin',
  listener: adminListenerSchema.optional().describe('The admin HTTP listener (status, explain, overrides, reload); absent means none.'),
} as const satisfies ListenerSection;
