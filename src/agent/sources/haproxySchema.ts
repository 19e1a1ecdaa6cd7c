import { z } from 'zod';

/**
 * One HAProxy instance (docs/PRODUCT.md §3 service metrics, "read directly from the load balancing
 * layer of each DC"): its stats socket (`stats socket … level operator` or higher in haproxy.cfg)
 * and which backend stands for which service.
 */
export const haproxySourceSchema = z.strictObject({
  /** Path of the stats socket (a Unix socket). */
  socket: z.string().min(1),
  intervalSeconds: z.number().min(0.2).max(3600).default(30),
  /** Socket connect and reply deadline. */
  timeoutSeconds: z.number().min(0.1).max(60).default(3),
  backends: z.array(z.strictObject({ backend: z.string().min(1), service: z.string().min(1) })).min(1),
});

export type HaproxySourceConfig = z.output<typeof haproxySourceSchema>;
