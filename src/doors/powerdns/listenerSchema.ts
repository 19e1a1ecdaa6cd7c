import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The PowerDNS remote backend front door (src/doors/powerdns/README.md): a Unix socket that
 * pdns_server connects to with `launch=remote` and `remote-connection-string=unix:path=<path>`.
 * A relative `path` is relative to the configuration file's directory. `mode` is the socket
 * file's permission (octal text, e.g. "0660": pdns_server's user must be able to write it).
 * Connections beyond `maxConnections` are closed at once; a request line longer than
 * `maxRequestBytes` closes its connection (pdns sends a few hundred bytes per request). A
 * connection that sends no complete request within `requestTimeoutMs` of connecting, or leaves a
 * request incomplete that long, is closed (pdns writes each request whole and `initialize` at once).
 * `http` adds a loopback TCP listener for PowerDNS's HTTP connector
 * (`remote-connection-string=http:url=http://ADDRESS:PORT/,post=1,post_json=1`), the transport
 * that survives an engine crash without SERVFAIL (src/doors/powerdns/README.md, "Engine outages").
 */
export const powerdnsListenerSchema = z.strictObject({
  path: z.string().min(1).describe('Unix socket path pdns_server connects to (remote backend), relative to the configuration file (restart needed).'),
  mode: z
    .string()
    .regex(/^0?[0-7]{3}$/, 'expected an octal file mode such as "0660"')
    .default('0660')
    .describe('Permission of the socket file, octal text; pdns_server must be able to write it; default "0660".'),
  maxConnections: z.number().int().min(1).max(4096).default(64).describe('Open PowerDNS connections at most; more are closed at once; default 64.'),
  maxRequestBytes: z
    .number()
    .int()
    .min(1024)
    .max(1048576)
    .default(65536)
    .describe('Longest request line in bytes; a longer one closes its connection; default 65536.'),
  requestTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(600000)
    .default(10000)
    .describe('A connection with no complete request within this many ms is closed; default 10000.'),
  http: z
    .strictObject({
      address: z
        .string()
        .refine((a) => isIP(a) !== 0, 'expected an IP address')
        .default('127.0.0.1')
        .describe('Address of the HTTP listener; default 127.0.0.1 (PowerDNS on the same host).'),
      port: z.number().int().min(0).max(65535).describe('TCP port of the HTTP listener (0: any free port, for tests).'),
    })
    .optional()
    .describe(
      'An HTTP listener for the remote backend HTTP connector (post=1,post_json=1) besides the Unix socket: PowerDNS reconnects it before a request when the engine restarted, without SERVFAIL; restart needed.',
    ),
});

export type PowerdnsListenerConfig = z.output<typeof powerdnsListenerSchema>;
