import { z } from 'zod';
import { ipSchema } from '../../core/config/fieldSchemas.js';

/**
 * The `host` source (docs/PRODUCT.md §3 host metrics): CPU and memory of this machine, the
 * bandwidth of the configured interfaces, and packet loss and status toward the data center's
 * check points (probed by the agent's prober, so they must lie inside `probes.allow`).
 */
export const hostSourceSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Cadence; CPU and bandwidth are averages over the time since the previous reading (one interval). */
  intervalSeconds: z.number().min(0.2).max(3600).default(30),
  /** Interfaces whose received + transmitted bits count as `bw`; `capacityMbps` gives the share of capacity too. */
  interfaces: z.array(z.strictObject({ name: z.string().min(1), capacityMbps: z.number().positive().optional() })).default([]),
  /**
   * Check points of the data center (its uplinks, WAN and LAN): `packetLoss` is the mean loss of a
   * probe train to each, `status` is down when no WAN or no LAN check point answers.
   */
  checkPoints: z.array(z.strictObject({ address: ipSchema, role: z.enum(['wan', 'lan']) })).default([]),
});

export type HostSourceConfig = z.output<typeof hostSourceSchema>;
