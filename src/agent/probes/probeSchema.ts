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
  allow: z
    .array(cidrSchema)
    .default([])
    .describe('Networks (CIDR) probes may go to; a request for any other address is refused, logged and counted. Empty (the default): no probing at all.'),
  methods: z
    .array(z.enum(['icmp', 'dns', 'tcp']))
    .min(1)
    .default(['dns'])
    .describe(
      'How each request is measured, in order, each method with its own train: icmp (echo, with TTL and hops; a raw socket with CAP_NET_RAW, else a ping socket), dns (with TTL and hops), tcp (RTT only).',
    ),
  trainLength: z.number().int().min(1).max(1000).default(5).describe('Packets per train: RTT minimum, median, jitter and loss come from one train.'),
  gapMs: z.number().int().min(1).max(10_000).default(20).describe('Gap between two packets of a train, in milliseconds.'),
  timeoutMs: z.number().int().min(10).max(30_000).default(2000).describe('A packet not answered within this many milliseconds counts as lost.'),
  port: z.number().int().min(1).max(65535).default(53).describe("Port of DNS queries and TCP connects (the client's DNS server)."),
  dnsName: z.string().min(1).default('.').describe('Name asked in DNS probes (type NS): any response, an error included, times the path.'),
  maxPacketsPerSecond: z.number().min(1).max(100_000).default(100).describe('Global cap on probe packets per second (a token bucket of one second’s worth).'),
  concurrency: z.number().int().min(1).max(1000).default(16).describe('Trains run at once.'),
  maxQueue: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(5000)
    .describe('Requests waiting in the agent at most; beyond, new ones are dropped (counted) until trains finish.'),
  pollMax: z.number().int().min(1).max(1000).default(200).describe('Requests asked of the engine per long poll.'),
  pollWaitSeconds: z.number().int().min(0).max(30).default(25).describe('How long the engine may hold a long poll, in seconds (at most 30).'),
  refreshSeconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(300)
    .describe('A network probed within this many seconds is not probed again (dedupe, whatever the engine asks).'),
  backoffSeconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(600)
    .describe('A network whose train got no reply is not probed again for this many seconds, doubled per further silent train up to maxBackoffSeconds.'),
  maxBackoffSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(86_400)
    .describe('Longest back-off of a silent network, in seconds.'),
});

export type ProbesConfig = z.output<typeof probesSchema>;
