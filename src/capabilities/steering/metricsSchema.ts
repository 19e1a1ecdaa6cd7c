import { z } from 'zod';

/**
 * Cadence of one metric source (docs/PRODUCT.md §3): agents push every `intervalSeconds`; a sample older
 * than `staleAfterSeconds` (default three intervals, so one lost push is tolerated) is stale and
 * follows the record's `unknown` rule.
 */
function cadenceFields(defaultInterval: number) {
  return {
    /** Seconds between pushes the agents are expected to keep (host/service: a 30–60 s collection cycle). */
    intervalSeconds: z
      .number()
      .int()
      .min(1)
      .max(86400)
      .default(defaultInterval)
      .describe(`Seconds between metric pushes the agents are expected to keep; default ${defaultInterval}.`),
    /** Seconds after which a sample is stale; at least one interval. */
    staleAfterSeconds: z
      .number()
      .int()
      .min(1)
      .max(604800)
      .optional()
      .describe('Seconds after which a sample is stale, at least intervalSeconds; default three intervals.'),
  };
}

function withStaleness<T extends { intervalSeconds: number; staleAfterSeconds?: number | undefined }>(s: T, ctx: z.RefinementCtx) {
  const staleAfterSeconds = s.staleAfterSeconds ?? 3 * s.intervalSeconds;
  if (staleAfterSeconds < s.intervalSeconds) {
    ctx.addIssue({ code: 'custom', path: ['staleAfterSeconds'], message: `must be at least intervalSeconds (${s.intervalSeconds})` });
  }
  return { ...s, staleAfterSeconds };
}

export const hostMetricsSchema = z.strictObject(cadenceFields(30)).transform(withStaleness);
export const serviceMetricsSchema = z.strictObject(cadenceFields(30)).transform(withStaleness);

/**
 * Client metrics are measured per client network: the client address masked to `ipv4Prefix` /
 * `ipv6Prefix` bits (default /24 and /48). Answers decided by client metrics carry that length as
 * ECS scope. At most `maxNetworks` networks are kept; the least recently updated one goes first.
 */
export const clientMetricsSchema = z
  .strictObject({
    ...cadenceFields(60),
    ipv4Prefix: z
      .number()
      .int()
      .min(1)
      .max(32)
      .default(24)
      .describe('Prefix bits an IPv4 client address is masked to for its client network (and ECS scope); default 24.'),
    ipv6Prefix: z
      .number()
      .int()
      .min(1)
      .max(128)
      .default(48)
      .describe('Prefix bits an IPv6 client address is masked to for its client network (and ECS scope); default 48.'),
    maxNetworks: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .default(100_000)
      .describe('Client networks kept; the least recently updated goes first; default 100000.'),
    /** Share of each new MOS window in the smoothed score, (0, 1]; 1 disables smoothing. */
    mosSmoothing: z.number().gt(0).max(1).default(0.5).describe('Share (0–1] of each new MOS window in the smoothed score; 1 disables smoothing; default 0.5.'),
  })
  .transform(withStaleness);

/** The `metrics` section: cadence and staleness per source (see src/capabilities/steering/README.md). */
export const metricsSchema = z.strictObject({
  host: hostMetricsSchema.prefault({}).describe('Cadence and staleness of host metrics pushed by agents.'),
  service: serviceMetricsSchema.prefault({}).describe('Cadence and staleness of service metrics pushed by agents.'),
  client: clientMetricsSchema.prefault({}).describe('Cadence, staleness and client networks of client path metrics (MOS, latency, loss).'),
});

export type MetricsConfig = z.output<typeof metricsSchema>;
