import { z } from 'zod';
import { ipSchema, listenPortSchema } from '../core/config/fieldSchemas.js';

/** One address:port the standalone DNS listener binds, UDP and TCP. */
export const dnsListenerSchema = z.strictObject({
  address: ipSchema,
  port: listenPortSchema.default(53),
});

/**
 * The admin HTTP listener (loopback by default). Mutating endpoints need `token` (or the token
 * read from `tokenFile`, relative to the configuration file, at least 16 characters) as
 * `Authorization: Bearer <token>`; without one they answer 403.
 */
export const adminListenerSchema = z
  .strictObject({
    address: ipSchema.default('127.0.0.1'),
    port: listenPortSchema.default(8053),
    token: z.string().min(16, 'an admin token has at least 16 characters').optional(),
    tokenFile: z.string().min(1).optional(),
  })
  .refine((a) => a.token === undefined || a.tokenFile === undefined, { message: 'set "token" or "tokenFile", not both' });

/**
 * The PowerDNS remote backend front door (src/doors/powerdns/README.md): a Unix socket that
 * pdns_server connects to with `launch=remote` and `remote-connection-string=unix:path=<path>`.
 * A relative `path` is relative to the configuration file's directory. `mode` is the socket
 * file's permission (octal text, e.g. "0660": pdns_server's user must be able to write it).
 * Connections beyond `maxConnections` are closed at once; a request line longer than
 * `maxRequestBytes` closes its connection (pdns sends a few hundred bytes per request). A
 * connection that sends no complete request within `requestTimeoutMs` of connecting, or leaves a
 * request incomplete that long, is closed (pdns writes each request whole and `initialize` at once).
 */
export const powerdnsListenerSchema = z.strictObject({
  path: z.string().min(1),
  mode: z
    .string()
    .regex(/^0?[0-7]{3}$/, 'expected an octal file mode such as "0660"')
    .default('0660'),
  maxConnections: z.number().int().min(1).max(4096).default(64),
  maxRequestBytes: z.number().int().min(1024).max(1048576).default(65536),
  requestTimeoutMs: z.number().int().min(100).max(600000).default(10000),
});

/**
 * The compact-protocol listener (docs/protocol.md) the CoreDNS plugin connects to: a Unix socket
 * at `path` (relative paths are relative to the configuration file), created with file `mode`
 * (octal text, e.g. "0660"). Connections beyond `maxConnections` are closed at once; frames longer
 * than `maxFrameBytes` close their connection; a connection with no complete frame (HELLO, QUERY,
 * PING) for `idleTimeoutMs` is closed (shims PING when idle; the CoreDNS plugin every second).
 */
export const compactListenerSchema = z.strictObject({
  path: z.string().min(1).max(100, 'a Unix socket path has at most 100 characters'),
  mode: z
    .string()
    .regex(/^0?[0-7]{3}$/, 'expected an octal file mode such as "0660"')
    .default('0660'),
  maxConnections: z.number().int().min(1).max(4096).default(64),
  maxFrameBytes: z.number().int().min(512).max(131072).default(4096),
  idleTimeoutMs: z.number().int().min(100).max(600000).default(30000),
});

export const listenersSchema = z.strictObject({
  dns: z.array(dnsListenerSchema).default([]),
  admin: adminListenerSchema.optional(),
  powerdns: powerdnsListenerSchema.optional(),
  compact: compactListenerSchema.optional(),
});

/** Standalone DNS listener behaviour (sizes in bytes, times in ms). */
export const dnsBehaviourSchema = z.strictObject({
  /** EDNS payload size we advertise and the UDP response limit for EDNS queries (RFC 6891 §6.2.5; DNS flag day 2020). */
  udpPayloadSize: z.number().int().min(512).max(4096).default(1232),
  /** A TCP connection with no complete query for this long is closed (RFC 7766 §6.2.3). */
  tcpIdleTimeoutMs: z.number().int().min(100).max(600000).default(10000),
  /**
   * Concurrent TCP connections, counted over all DNS listener addresses together; at the cap a new connection replaces the one idle longest if that
   * has had no complete query for half `tcpIdleTimeoutMs` (RFC 7766 §6.2.3), else it is closed at once.
   */
  tcpMaxConnections: z.number().int().min(1).max(100000).default(256),
  /** Fraction (0–1) of queries logged, with client addresses truncated to /24 and /48. */
  queryLogSampleRate: z.number().min(0).max(1).default(0),
});

export type DnsListenerConfig = z.output<typeof dnsListenerSchema>;
export type AdminListenerConfig = z.output<typeof adminListenerSchema>;
export type PowerdnsListenerConfig = z.output<typeof powerdnsListenerSchema>;
export type CompactListenerConfig = z.output<typeof compactListenerSchema>;
export type DnsBehaviourConfig = z.output<typeof dnsBehaviourSchema>;
