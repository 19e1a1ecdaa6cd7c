import { z } from 'zod';

/**
 * One HAProxy instance (docs/PRODUCT.md §3 service metrics, "read directly from the load balancing
 * layer of each DC"): its stats socket (`stats socket … level operator` or higher in haproxy.cfg)
 * and which backend stands for which service.
 */
export const haproxySourceSchema = z.strictObject({
  socket: z.string().min(1).describe('Path of the stats socket (a Unix socket, level operator or higher).'),
  intervalSeconds: z.number().min(0.2).max(3600).default(30).describe('Cadence in seconds of reading the stats socket.'),
  timeoutSeconds: z.number().min(0.1).max(60).default(3).describe('Socket connect and reply deadline in seconds.'),
  backends: z
    .array(
      z.strictObject({
        backend: z.string().min(1).describe('HAProxy backend name (pxname) read.'),
        service: z.string().min(1).describe('gslbd service its metrics (healthyBackends, sessions, …) are reported for.'),
      }),
    )
    .min(1)
    .describe('Which HAProxy backend stands for which gslbd service.'),
});

export type HaproxySourceConfig = z.output<typeof haproxySourceSchema>;
