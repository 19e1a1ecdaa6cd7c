import { z } from 'zod';
import { restartOnly } from '../../core/config/restartOnly.js';
import { ipSchema, listenPortSchema } from '../../core/config/fieldSchemas.js';

/** One address:port the standalone DNS listener binds, UDP and TCP. */
export const dnsListenerSchema = z.strictObject({
  address: ipSchema.describe('IPv4 or IPv6 address the DNS listener binds, UDP and TCP (restart needed).'),
  port: listenPortSchema.default(53).describe('Port the DNS listener binds, UDP and TCP; 0 lets the system pick one; default 53 (restart needed).'),
});

/**
 * Response-rate limiting of the fast path (README "Fast path", "Abuse: response-rate limiting";
 * `native/rate_limit.h`): a token bucket per source block, applied by the native threads to every
 * datagram before they answer it or hand it to JavaScript. Off while `responsesPerSecond` is 0.
 */
export const rateLimitSchema = z.strictObject({
  responsesPerSecond: z
    .number()
    .int()
    .min(0)
    .max(1000000)
    .default(0)
    .describe('Responses per second per source block (IPv4 /24, IPv6 /56 by default) from the fast path; 0 turns rate limiting off; default 0.'),
  burst: z
    .number()
    .int()
    .min(1)
    .max(1000000)
    .optional()
    .describe('Responses a source block may get at once after being idle (the bucket size); default: responsesPerSecond.'),
  /** BIND's `slip`: a limited client behind a spoofed address still gets its answer over TCP. */
  slip: z
    .number()
    .int()
    .min(0)
    .max(10)
    .default(2)
    .describe('Every slip-th limited query of a block gets an empty TC=1 reply (the client retries over TCP), the others none; 0: never; default 2.'),
  ipv4PrefixLength: z.number().int().min(0).max(32).default(24).describe('Source block of an IPv4 sender: prefix length 0–32; default 24.'),
  ipv6PrefixLength: z.number().int().min(0).max(64).default(56).describe('Source block of an IPv6 sender: prefix length 0–64; default 56.'),
  tableSize: z
    .number()
    .int()
    .min(4)
    .max(16777216)
    .default(65536)
    .describe(
      'Source blocks tracked at once per listener address (24 bytes each; 65536 = 1.5 MiB); a new block replaces the fullest bucket of its set; default 65536.',
    ),
});

const RATE_LIMIT_DEFAULT = { responsesPerSecond: 0, slip: 2, ipv4PrefixLength: 24, ipv6PrefixLength: 56, tableSize: 65536 };

/** Standalone DNS listener behaviour (sizes in bytes, times in ms): the root `dns` key. */
export const dnsBehaviourSchema = z.strictObject({
  /** EDNS payload size we advertise and the UDP response limit for EDNS queries (RFC 6891 §6.2.5; DNS flag day 2020). */
  udpPayloadSize: z
    .number()
    .int()
    .min(512)
    .max(4096)
    .default(1232)
    .describe('EDNS payload size in bytes advertised and used as the UDP response limit for EDNS queries (RFC 6891 §6.2.5), 512–4096; default 1232.'),
  /** A TCP connection with no complete query for this long is closed (RFC 7766 §6.2.3). */
  tcpIdleTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(600000)
    .default(10000)
    .describe('A DNS TCP connection with no complete query for this many ms is closed (RFC 7766 §6.2.3); default 10000.'),
  /**
   * Concurrent TCP connections, counted over all DNS listener addresses together. At the cap a new
   * connection of a client holding n connections replaces, while some client holds n + 2 or more,
   * the connection of the client holding the most that waits longest for a query (a fair share);
   * else the one waiting longest (of that client, then of all) if it has had no complete query for
   * half `tcpIdleTimeoutMs` (RFC 7766 §6.2.3: under pressure, close idle connections sooner); else
   * the new connection is closed at once.
   */
  tcpMaxConnections: z
    .number()
    .int()
    .min(1)
    .max(100000)
    .default(256)
    .describe(
      'Concurrent DNS TCP connections over all DNS listener addresses; at the cap a new one replaces an idle or over-share connection or is closed; default 256.',
    ),
  /**
   * Concurrent TCP connections from one client (an IPv4 address or an IPv6 /64). At this limit a
   * new connection of the client replaces its own connection waiting longest for a query if that
   * has had none for half `tcpIdleTimeoutMs`, else it is closed at once: slow or reconnecting
   * clients take no place from others. 64, not fewer: a resolver opens concurrent connections.
   */
  tcpMaxConnectionsPerClient: z
    .number()
    .int()
    .min(1)
    .max(100000)
    .default(64)
    .describe('Concurrent DNS TCP connections from one client (an IPv4 address or an IPv6 /64); default 64.'),
  /** Fraction (0–1) of queries logged, with client addresses truncated to /24 and /48. */
  queryLogSampleRate: z
    .number()
    .min(0)
    .max(1)
    .default(0)
    .describe(
      'Fraction (0–1) of DNS queries written to the query log, client addresses truncated to /24 and /48; applies on reload (fast-path template hits keep the start-up rate until restart); default 0.',
    ),
  /** The native UDP fast path (README "Fast path"): off by default; `threads` 0 = one per core. */
  fastPath: restartOnly(
    z.strictObject({
      enabled: z.boolean().default(false).describe('Serve UDP queries through the native fast path; default false.'),
      threads: z.number().int().min(0).max(256).default(0).describe('Fast-path threads; 0 means one per core; default 0.'),
      /** On by default: the queries are answered by the engine's unasked view, which moves no rotation or other state (README "Fast path"). */
      rewarmTemplates: z
        .boolean()
        .default(true)
        .describe(
          'After each publish, answer the queries of the current templates again on the new snapshot (without moving rotation, random draws, counters or the query log) so the first query of a client block is answered natively; false leaves it to JavaScript; default true.',
        ),
      rateLimit: rateLimitSchema.default(RATE_LIMIT_DEFAULT).describe('Response-rate limiting of the fast path (README "Fast path"); off by default.'),
    }),
    'the native fast path opens its sockets and threads at start',
  )
    .default({ enabled: false, threads: 0, rewarmTemplates: true, rateLimit: RATE_LIMIT_DEFAULT })
    .describe('The native UDP fast path (README "Fast path"), off by default; restart needed.'),
});

/** `listeners.dns`: the addresses of the standalone listener (none by default: no DNS socket). */
export const dnsListenersSchema = z
  .array(dnsListenerSchema)
  .default([])
  .describe('Addresses and ports the standalone DNS listener binds; none by default (no DNS socket); restart needed.');

/** The root `dns` key, every field at its default when absent. */
export const dnsRootSchema = dnsBehaviourSchema
  .default({
    udpPayloadSize: 1232,
    tcpIdleTimeoutMs: 10000,
    tcpMaxConnections: 256,
    tcpMaxConnectionsPerClient: 64,
    queryLogSampleRate: 0,
    fastPath: { enabled: false, threads: 0, rewarmTemplates: true, rateLimit: RATE_LIMIT_DEFAULT },
  })
  .describe('Behaviour of the standalone DNS listener: EDNS size, TCP limits, query log sampling, fast path.');

export type DnsListenerConfig = z.output<typeof dnsListenerSchema>;
export type DnsBehaviourConfig = z.output<typeof dnsBehaviourSchema>;
