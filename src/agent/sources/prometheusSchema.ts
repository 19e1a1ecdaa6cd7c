import { z } from 'zod';

/**
 * Host and service metric names an engine accepts (docs/PRODUCT.md §3; the engine's push API
 * validates them again, with ranges: `src/capabilities/steering/catalog.ts`). Kept here so a
 * mapping to a metric that does not exist fails when the agent's configuration loads.
 */
export const HOST_METRICS = ['cpu', 'mem', 'bw', 'status', 'packetLoss'] as const;
export const SERVICE_METRICS = ['cpu', 'mem', 'bw', 'request', 'connection', 'session_new', 'status', 'healthyBackends'] as const;

/**
 * One mapping from a Prometheus series to a metric: the series name, label matchers (exact
 * values; every label named must match), how several matching series become one value
 * (`sum`, `avg`, `max`; default `sum`), whether the value is a counter to turn into a per-second
 * rate (`rate: true`: the difference of two scrapes over the time between them, a reset gives no
 * rate), an optional `scale` (e.g. 8 for bytes → bits), and the target: `host: <metric>`, or
 * `service: <name>` with `metric: <metric>`. `status` is up when the value is above 0.
 */
export const seriesMappingSchema = z
  .strictObject({
    series: z
      .string()
      .regex(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, { error: 'a Prometheus metric name' })
      .describe('Prometheus metric name of the series read.'),
    match: z
      .record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/), z.string())
      .default({})
      .describe('Label matchers: exact values; every label named must match.'),
    aggregate: z.enum(['sum', 'avg', 'max']).default('sum').describe('How several matching series become one value.'),
    rate: z.boolean().default(false).describe('A counter turned into a per-second rate (difference of two scrapes over the time between them).'),
    scale: z.number().positive().default(1).describe('Factor applied to the value (e.g. 8 for bytes to bits).'),
    host: z.enum(HOST_METRICS).optional().describe('Host metric the value becomes (or service with metric).'),
    service: z.string().min(1).optional().describe('Service whose metric the value becomes (with metric).'),
    metric: z.enum(SERVICE_METRICS).optional().describe('Service metric the value becomes (with service).'),
  })
  .refine((m) => (m.host === undefined) !== (m.service === undefined), { error: 'map a series to one "host" metric or to a "service" with its "metric"' })
  .refine((m) => (m.service === undefined) === (m.metric === undefined), { error: '"service" and "metric" go together' });

export type SeriesMapping = z.output<typeof seriesMappingSchema>;

/** One scraped endpoint (any exporter: node_exporter, HAProxy's, an application's) and the series taken from it. */
export const prometheusSourceSchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: 'an http:// or https:// URL of a /metrics endpoint' })
    .describe('http:// or https:// URL of the /metrics endpoint scraped.'),
  intervalSeconds: z.number().min(0.2).max(3600).default(30).describe('Scrape cadence in seconds.'),
  timeoutSeconds: z.number().min(0.1).max(60).default(5).describe('Scrape deadline in seconds.'),
  metrics: z.array(seriesMappingSchema).min(1).describe('Series taken from the endpoint, each mapped to a host or service metric.'),
});

export type PrometheusSourceConfig = z.output<typeof prometheusSourceSchema>;
