import { z } from 'zod';
import { ipSchema } from '../../core/config/fieldSchemas.js';

/**
 * The `host` source (docs/PRODUCT.md §3 host metrics): CPU and memory of this machine, the
 * bandwidth of the configured interfaces, and packet loss and status toward the data center's
 * check points (probed by the agent's prober, so they must lie inside `probes.allow`).
 */
export const hostSourceSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('Whether host metrics are measured (default on for a data center agent).'),
  intervalSeconds: z
    .number()
    .min(0.2)
    .max(3600)
    .default(30)
    .describe('Cadence in seconds; CPU and bandwidth are averages over the time since the previous reading (one interval).'),
  interfaces: z
    .array(
      z.strictObject({
        name: z.string().min(1).describe('Interface name as in /proc/net/dev (e.g. eth0).'),
        capacityMbps: z.number().positive().optional().describe('Capacity in Mbit/s; gives bandwidth as a share of capacity too.'),
      }),
    )
    .default([])
    .describe('Interfaces whose received + transmitted bits count as the bw metric.'),
  checkPoints: z
    .array(
      z.strictObject({
        address: ipSchema.describe('Address of the check point (inside probes.allow).'),
        role: z.enum(['wan', 'lan']).describe('wan or lan: status is down when no WAN or no LAN check point answers.'),
      }),
    )
    .default([])
    .describe(
      'Check points of the data center (its uplinks): packetLoss is the mean loss of a probe train to each; status is down when no WAN or no LAN check point answers.',
    ),
});

export type HostSourceConfig = z.output<typeof hostSourceSchema>;
