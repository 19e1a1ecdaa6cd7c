import { z } from 'zod';
import { parseCidr } from '../../core/net/ipAddress.js';

/** A network in CIDR notation (`192.0.2.0/24`, `2001:db8::/32`; a bare address is a host prefix). */
const cidrSchema = z.string().refine(
  (s) => {
    try {
      parseCidr(s);
      return true;
    } catch {
      return false;
    }
  },
  { error: 'a network in CIDR notation without host bits (192.0.2.0/24)' },
);

/**
 * Client-path probes (docs/PRODUCT.md §5, §7; src/agent/README.md "Probes"). **Safety first**:
 * `allow` lists the networks the agent may send probes to — empty by default, so an agent probes
 * nothing until the operator says where — and `maxPacketsPerSecond` caps every probe packet the
 * agent sends, whatever the queue holds.
 */
export const probesSchema = z.strictObject({
  /** Networks probes may go to; a request for any other address is refused, logged and counted. */
  allow: z.array(cidrSchema).default([]),
  /** How each request is measured, in order; every method sends its own train: `icmp` (echo, with TTL and hops; needs CAP_NET_RAW), `dns`, `tcp`. */
  methods: z
    .array(z.enum(['icmp', 'dns', 'tcp']))
    .min(1)
    .default(['dns']),
  /** Packets (DNS queries, TCP connects) per train: RTT minimum, median, jitter and loss come from one train. */
  trainLength: z.number().int().min(1).max(1000).default(5),
  /** Gap between two packets of a train. */
  gapMs: z.number().int().min(1).max(10_000).default(20),
  /** A packet not answered within this counts as lost. */
  timeoutMs: z.number().int().min(10).max(30_000).default(2000),
  /** Port of DNS queries and TCP connects (the client's DNS server). */
  port: z.number().int().min(1).max(65535).default(53),
  /** Name asked in DNS probes (type NS): any response, an error included, times the path. */
  dnsName: z.string().min(1).default('.'),
  /** Global cap on probe packets per second (a token bucket of one second's worth). */
  maxPacketsPerSecond: z.number().min(1).max(100_000).default(100),
  /** Trains run at once. */
  concurrency: z.number().int().min(1).max(1000).default(16),
  /** Requests waiting in the agent at most; beyond, new ones are dropped (counted) until trains finish. */
  maxQueue: z.number().int().min(1).max(1_000_000).default(5000),
  /** Requests asked of the engine per long poll, and how long the engine may hold the poll (≤ 30 s). */
  pollMax: z.number().int().min(1).max(1000).default(200),
  pollWaitSeconds: z.number().int().min(0).max(30).default(25),
  /** A network probed within this is not probed again (dedupe, whatever the engine asks). */
  refreshSeconds: z.number().int().min(1).max(86_400).default(300),
  /** A network whose train got no reply is not probed again for this long, doubled per further silent train up to `maxBackoffSeconds`. */
  backoffSeconds: z.number().int().min(1).max(86_400).default(600),
  maxBackoffSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(86_400),
});

export type ProbesConfig = z.output<typeof probesSchema>;
