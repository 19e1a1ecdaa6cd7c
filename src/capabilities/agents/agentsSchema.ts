import { z } from 'zod';

/** Shortest agent token: as for the admin token, an empty or short one would be guessable. */
export const MIN_AGENT_TOKEN_CHARS = 16;

/** A proximity zone id (`0`, `0.1`, `1.2.3`: docs/PRODUCT.md §5 tiers). */
export const zoneIdSchema = z.string().regex(/^\d+(\.\d+)*$/, { error: 'a proximity zone id is dotted numbers ("0", "0.1")' });

/**
 * One agent's credential: its name, what it measures for — a data center (host, service and
 * probe data of that DC) or a proximity zone (probe results only) — and its bearer token.
 */
export const agentCredentialSchema = z
  .strictObject({
    /** Shown in logs, metrics and `/explain` (which agent reported a metric). */
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, { error: 'an agent name is 1–63 letters, digits, ".", "_" or "-"' })
      .describe('Name of the agent, shown in logs, metrics and /explain.'),
    dc: z.string().min(1).optional().describe('Data center the agent measures for (host, service and probe data); one of dc or zone.'),
    zone: zoneIdSchema.optional().describe('Proximity zone id the agent measures for (probe results only); one of dc or zone.'),
    token: z
      .string()
      .min(MIN_AGENT_TOKEN_CHARS, `an agent token has at least ${MIN_AGENT_TOKEN_CHARS} characters`)
      .optional()
      .describe('Bearer token of the agent (at least 16 characters); one of token or tokenFile.'),
    /** A file holding the token (relative to the configuration file), read at start-up and at every reload. */
    tokenFile: z
      .string()
      .min(1)
      .optional()
      .describe('File holding the agent token, relative to the configuration file, read at start-up and every reload; one of token or tokenFile.'),
  })
  .refine((a) => (a.dc === undefined) !== (a.zone === undefined), { error: 'an agent measures for one "dc" or one "zone"' })
  .refine((a) => (a.token === undefined) !== (a.tokenFile === undefined), { error: 'set "token" or "tokenFile" (one of them)' });

export type AgentCredentialConfig = z.output<typeof agentCredentialSchema>;

/**
 * The probe-request queue (docs/PRODUCT.md §5, §7): which client networks the engine asks its
 * agents to measure, how it dedupes them and how long requests and results live.
 */
export const probeQueueSchema = z.strictObject({
  /**
   * Queue the client's ECS network too (masked to at most /24 and /56, RFC 7871 §11), not only
   * the resolver's address. Off by default: probing goes to the resolver, as seed 000 does.
   */
  ecs: z.boolean().default(false).describe("Queue the client's ECS network too (masked to at most /24 and /56), not only the resolver; default false."),
  /** The network a request stands for (dedupe key): the resolver's address masked to this length. */
  ipv4Prefix: z
    .number()
    .int()
    .min(8)
    .max(32)
    .default(24)
    .describe('Prefix bits an IPv4 resolver address is masked to for a probe request (dedupe key); default 24.'),
  ipv6Prefix: z
    .number()
    .int()
    .min(16)
    .max(128)
    .default(48)
    .describe('Prefix bits an IPv6 resolver address is masked to for a probe request (dedupe key); default 48.'),
  /** A network measured by a data center or zone more recently than this is not requested again from it. */
  refreshSeconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(300)
    .describe('A network measured by a data center or zone more recently than this many seconds is not requested again; default 300.'),
  /** A request no agent of a group read within this long is skipped for that group. */
  maxAgeSeconds: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(120)
    .describe('A probe request no agent of a group read within this many seconds is skipped for it; default 120.'),
  /** Requests kept at most (the stream's bound; the oldest go first). */
  maxLength: z.number().int().min(1).max(1_000_000).default(10_000).describe('Probe requests kept at most (the oldest go first); default 10000.'),
  /** Networks remembered for dedupe and results (each bound separately; the oldest go first). */
  maxNetworks: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .default(100_000)
    .describe('Networks remembered for dedupe and for results, each bound separately (the oldest go first); default 100000.'),
  /** Probe results older than this (engine receive time) are dropped. */
  resultTtlSeconds: z.number().int().min(1).max(86_400).default(900).describe('Probe results older than this many seconds are dropped; default 900.'),
});

export type ProbeQueueConfig = z.output<typeof probeQueueSchema>;

/** The `agents` section (src/capabilities/agents/README.md). */
export const agentsSchema = z.strictObject({
  credentials: z
    .array(agentCredentialSchema)
    .default([])
    .describe('One credential per agent: its name, its data center or proximity zone, its token; default none.'),
  probes: probeQueueSchema.prefault({}).describe('The probe-request queue: which client networks agents are asked to measure, dedupe and lifetimes.'),
});

export type AgentsConfig = z.output<typeof agentsSchema>;
