import { z } from 'zod';
import { ipSchema, listenPortSchema } from '../core/config/fieldSchemas.js';
import { haproxySourceSchema } from './sources/haproxySchema.js';
import { hostSourceSchema } from './sources/hostSchema.js';
import { prometheusSourceSchema } from './sources/prometheusSchema.js';
import { probesSchema } from './probes/probeSchema.js';

/** Shortest agent token (the engine refuses shorter ones: `src/capabilities/agents/agentsSchema.ts`). */
const MIN_TOKEN_CHARS = 16;

/**
 * One engine the agent reports to: its admin listener's URL, the agent's own bearer token
 * (`token`, or `tokenFile`, relative to the agent's configuration file), and for HTTPS the CA file
 * the engine's certificate is verified against (default: the system's CAs) and an optional client
 * certificate (when the engine requires one: `listeners.admin.tls.clientCaFile`).
 */
export const engineSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/, error: "an http:// or https:// URL of the engine's admin listener" })
      .describe("http:// or https:// URL of the engine's admin listener."),
    token: z
      .string()
      .min(MIN_TOKEN_CHARS, `an agent token has at least ${MIN_TOKEN_CHARS} characters`)
      .optional()
      .describe("The agent's bearer token (at least 16 characters); set token or tokenFile."),
    tokenFile: z.string().min(1).optional().describe("File holding the agent's bearer token, relative to the agent's configuration file."),
    caFile: z.string().min(1).optional().describe("CA file the engine's certificate is verified against (https only; default: the system's CAs)."),
    certFile: z.string().min(1).optional().describe('Client certificate file, when the engine requires one (https only; with keyFile).'),
    keyFile: z.string().min(1).optional().describe("Client certificate's key file (with certFile)."),
  })
  .refine((e) => (e.token === undefined) !== (e.tokenFile === undefined), { error: 'set "token" or "tokenFile" (one of them)' })
  .refine((e) => (e.certFile === undefined) === (e.keyFile === undefined), { error: 'a client certificate needs both "certFile" and "keyFile"' })
  .refine((e) => e.url.startsWith('https:') || (e.caFile === undefined && e.certFile === undefined), {
    error: 'caFile, certFile and keyFile apply to https:// engines only',
  });

export type EngineConfig = z.output<typeof engineSchema>;

/** How reports travel (docs/PRODUCT.md §7: a batch per cycle, retries with backoff and jitter, bounded while an engine is down). */
export const reportingSchema = z.strictObject({
  intervalSeconds: z
    .number()
    .min(0.2)
    .max(3600)
    .default(30)
    .describe('Reporting cycle in seconds: every interval, the fresh readings of every source go to every engine in one batch.'),
  timeoutSeconds: z.number().min(0.1).max(120).default(10).describe('Deadline of one request to an engine, in seconds.'),
  retrySeconds: z
    .number()
    .min(0.05)
    .max(600)
    .default(1)
    .describe(
      'First retry delay in seconds after a failed report, doubled per failure up to maxRetrySeconds; each delay drawn uniformly below it (full jitter).',
    ),
  maxRetrySeconds: z.number().min(0.05).max(3600).default(60).describe('Longest retry delay in seconds.'),
  maxPendingProbes: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10_000)
    .describe('Probe results kept per engine while it cannot be reached; beyond, the oldest are dropped (counted).'),
});

/** The `agent` identity: a data center's agent (host, service and probe data) or a proximity zone's (probe results only). */
export const identitySchema = z
  .strictObject({
    name: z.string().min(1).max(63).describe("The agent's name, for logs and its /metrics; the engines know it by its token."),
    dc: z.string().min(1).optional().describe('The data center this agent measures for (host, service and probe data); set dc or zone.'),
    zone: z
      .string()
      .regex(/^\d+(\.\d+)*$/, { error: 'a proximity zone id is dotted numbers ("0", "0.1")' })
      .optional()
      .describe('The proximity zone this agent probes for (probe results only), e.g. "0.1"; set dc or zone.'),
  })
  .refine((a) => (a.dc === undefined) !== (a.zone === undefined), { error: 'an agent measures for one "dc" or one "zone"' });

/**
 * `agent.yaml` (src/agent/README.md): who the agent is, the engines it reports to, its sources and
 * their cadences, and its own listener for Prometheus. Unknown keys are errors.
 */
export const agentConfigSchema = z
  .strictObject({
    agent: identitySchema.describe('Who the agent is: a data center agent or a proximity zone agent.'),
    engines: z.array(engineSchema).min(1).describe('The engines the agent reports to (every engine gets every report).'),
    report: reportingSchema.prefault({}).describe('How reports travel: cycle, deadline, retries and what is kept while an engine is down.'),
    host: hostSourceSchema.optional().describe("Host metrics from the OS (/proc); on by default for a data center's agent."),
    haproxy: z.array(haproxySourceSchema).default([]).describe('HAProxy instances whose stats socket gives service metrics.'),
    prometheus: z.array(prometheusSourceSchema).default([]).describe('Prometheus endpoints scraped, each with the series mapped to host or service metrics.'),
    probes: probesSchema.optional().describe('Client-path probes (absent: the agent probes nothing and asks engines for no probe requests).'),
    metrics: z
      .strictObject({
        address: ipSchema.default('127.0.0.1').describe("Address of the agent's /metrics listener."),
        port: listenPortSchema.default(9464).describe("Port of the agent's /metrics listener."),
      })
      .optional()
      .describe("The agent's own Prometheus /metrics (absent: not served)."),
    logging: z
      .strictObject({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Lowest level logged (pino levels).'),
      })
      .prefault({})
      .describe("The agent's log (JSON lines on stdout)."),
  })
  .superRefine((c, ctx) => {
    if (c.agent.zone !== undefined) {
      if (c.host?.enabled) ctx.addIssue({ code: 'custom', path: ['host'], message: 'a zone agent reports probe results only: no host source' });
      if (c.haproxy.length > 0) ctx.addIssue({ code: 'custom', path: ['haproxy'], message: 'a zone agent reports probe results only: no service sources' });
      if (c.prometheus.length > 0)
        ctx.addIssue({ code: 'custom', path: ['prometheus'], message: 'a zone agent reports probe results only: no Prometheus sources' });
    }
    if ((c.host?.checkPoints.length ?? 0) > 0 && c.probes === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['host', 'checkPoints'],
        message: 'check points are probed: configure "probes" (with the check points inside probes.allow)',
      });
    }
    const services = new Map<string, string>();
    c.haproxy.forEach((h, i) =>
      h.backends.forEach((b, j) => {
        const seen = services.get(b.service);
        if (seen !== undefined)
          ctx.addIssue({ code: 'custom', path: ['haproxy', i, 'backends', j, 'service'], message: `service "${b.service}" is already measured by ${seen}` });
        else services.set(b.service, `haproxy[${i}].backends[${j}]`);
      }),
    );
  })
  .transform((c) => ({ ...c, host: c.host ?? (c.agent.dc !== undefined ? hostSourceSchema.parse({}) : hostSourceSchema.parse({ enabled: false })) }));

export type AgentConfig = z.output<typeof agentConfigSchema>;
