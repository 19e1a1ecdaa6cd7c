import { z } from 'zod';
import { ipSchema, listenPortSchema } from '../../core/config/fieldSchemas.js';

/** One address:port the standalone DNS listener binds, UDP and TCP. */
export const dnsListenerSchema = z.strictObject({
  address: ipSchema,
  port: listenPortSchema.default(53),
});

/** Standalone DNS listener behaviour (sizes in bytes, times in ms): the root `dns` key. */
export const dnsBehaviourSchema = z.strictObject({
  /** EDNS payload size we advertise and the UDP response limit for EDNS queries (RFC 6891 §6.2.5; DNS flag day 2020). */
  udpPayloadSize: z.number().int().min(512).max(4096).default(1232),
  /** A TCP connection with no complete query for this long is closed (RFC 7766 §6.2.3). */
  tcpIdleTimeoutMs: z.number().int().min(100).max(600000).default(10000),
  /**
   * Concurrent TCP connections, counted over all DNS listener addresses together. At the cap a new
   * connection replaces one that has had no complete query for {@link TCP_PRESSURE_WAIT_MS} or half
   * `tcpIdleTimeoutMs`, whichever is shorter (RFC 7766 §6.2.3: under pressure, close idle
   * connections sooner): the one waiting longest of the client holding the most connections, else
   * the one waiting longest of all; when none qualifies the new connection is closed at once.
   */
  tcpMaxConnections: z.number().int().min(1).max(100000).default(256),
  /**
   * Concurrent TCP connections from one client (an IPv4 address or an IPv6 /64). At this limit a
   * new connection of the client replaces its own connection waiting longest for a query if that
   * waited as long as at the total cap, else it is closed at once: slow or reconnecting clients
   * take no place from others.
   */
  tcpMaxConnectionsPerClient: z.number().int().min(1).max(100000).default(64),
  /** Fraction (0–1) of queries logged, with client addresses truncated to /24 and /48. */
  queryLogSampleRate: z.number().min(0).max(1).default(0),
});

/** `listeners.dns`: the addresses of the standalone listener (none by default: no DNS socket). */
export const dnsListenersSchema = z.array(dnsListenerSchema).default([]);

/** The root `dns` key, every field at its default when absent. */
export const dnsRootSchema = dnsBehaviourSchema.default({
  udpPayloadSize: 1232,
  tcpIdleTimeoutMs: 10000,
  tcpMaxConnections: 256,
  tcpMaxConnectionsPerClient: 64,
  queryLogSampleRate: 0,
});

/** The longest a connection must have waited for a query to be replaced at the connection cap (ms). */
export const TCP_PRESSURE_WAIT_MS = 1000;

export type DnsListenerConfig = z.output<typeof dnsListenerSchema>;
export type DnsBehaviourConfig = z.output<typeof dnsBehaviourSchema>;
