import { z } from 'zod';
import { isIP } from 'node:net';

/**
 * The agent API's wire contract (docs/PRODUCT.md §7): what `gslbd agent` (`src/agent/`) sends and
 * what the engine's agents capability (`src/capabilities/agents/`) accepts, kept here, at the
 * bottom, so both sides build from one definition without importing each other. Routes, under
 * the admin listener, each with the agent's own bearer credential:
 * - `GET /agent/v1/hello` → {@link AgentHello};
 * - `POST /agent/v1/report` with an {@link AgentReport} → `{accepted: {host, services, probes}}`,
 *   or 400 / 422 with `problems` (each with its path in the report), 403 for another DC or zone;
 * - `GET /agent/v1/probes?max=&wait=` → {@link ProbeRequestsReply} (long poll, `wait` ≤ 30 s).
 * A new version adds routes under `/agent/v2/`; v1 keeps its shapes.
 */

/** The version of the agent API: routes live under `/agent/v1/`. */
export const AGENT_API_VERSION = 1;

/** Probe results one report may carry at most. */
export const MAX_PROBES_PER_REPORT = 5_000;

/** Services one report may carry at most. */
export const MAX_SERVICES_PER_REPORT = 1_000;

/** How a path was measured (`src/agent/probes/`): ICMP echo, a TCP connect to port 53, a DNS query over UDP. */
export const PROBE_METHODS = ['icmp', 'tcp', 'dns'] as const;

const ms = z.number().min(0).max(600_000);

/**
 * One probe train's result toward one client network (docs/PRODUCT.md §5): the address probed, the
 * method, packets sent and answered, RTT minimum and median and RFC 3550 jitter in ms (absent when
 * nothing answered), and the received TTL with the hop count inferred from it (ICMP and DNS only).
 */
export const probeResultSchema = z
  .strictObject({
    target: z.string().refine((s) => isIP(s) !== 0 && !s.includes('%'), { error: 'must be an IPv4 or IPv6 address' }),
    method: z.enum(PROBE_METHODS),
    sent: z.number().int().min(1).max(10_000),
    received: z.number().int().min(0).max(10_000),
    rttMinMs: ms.optional(),
    rttMedianMs: ms.optional(),
    jitterMs: ms.optional(),
    ttl: z.number().int().min(1).max(255).optional(),
    hops: z.number().int().min(0).max(255).optional(),
  })
  .superRefine((p, ctx) => {
    if (p.received > p.sent) ctx.addIssue({ code: 'custom', path: ['received'], message: 'cannot exceed "sent"' });
    const timed = p.rttMinMs !== undefined && p.rttMedianMs !== undefined;
    if (p.received > 0 && !timed) ctx.addIssue({ code: 'custom', path: ['rttMinMs'], message: 'a train with replies carries rttMinMs and rttMedianMs' });
    if (
      p.received === 0 &&
      (p.rttMinMs !== undefined || p.rttMedianMs !== undefined || p.jitterMs !== undefined || p.ttl !== undefined || p.hops !== undefined)
    ) {
      ctx.addIssue({ code: 'custom', path: ['received'], message: 'a train without replies carries no RTT, jitter, TTL or hops' });
    }
    if (timed && p.rttMinMs! > p.rttMedianMs!) ctx.addIssue({ code: 'custom', path: ['rttMinMs'], message: 'cannot exceed rttMedianMs' });
    if (p.method === 'tcp' && (p.ttl !== undefined || p.hops !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['ttl'], message: 'a TCP connect gives RTT only (no TTL or hops)' });
    }
  });

export type ProbeResultReport = z.output<typeof probeResultSchema>;

/**
 * The body of `POST /agent/v1/report`: one batch per agent cycle. It names the data center (or
 * proximity zone) it is for — which must be the agent's own — and carries any of: host metrics
 * (a host sample of the push API without `dc`), service metrics (service samples without `dc`),
 * probe results. Host and service samples are validated by the push API's own rules.
 */
export const reportSchema = z
  .strictObject(
    {
      dc: z.string().min(1).optional(),
      zone: z.string().min(1).optional(),
      host: z.record(z.string(), z.unknown()).optional(),
      services: z.array(z.record(z.string(), z.unknown())).max(MAX_SERVICES_PER_REPORT).optional(),
      probes: z.array(probeResultSchema).max(MAX_PROBES_PER_REPORT).optional(),
    },
    { error: 'the body must be a JSON object {"dc" or "zone", "host"?, "services"?, "probes"?}' },
  )
  .refine((r) => (r.dc === undefined) !== (r.zone === undefined), { error: 'a report names one "dc" or one "zone"' });

export type AgentReport = z.output<typeof reportSchema>;

/** `GET /agent/v1/hello`: who the credential says the agent is. */
export interface AgentHello {
  readonly apiVersion: number;
  readonly agent: string;
  readonly dc?: string;
  readonly zone?: string;
  readonly probes: { readonly maxWaitSeconds: number; readonly networkLengths: { readonly ipv4: number; readonly ipv6: number } };
}

/** One probe request as an agent receives it: the address to probe, the network it stands for, and how long ago it was queued. */
export interface ProbeRequestWire {
  readonly target: string;
  readonly network: string;
  readonly ageMs: number;
}

/** `GET /agent/v1/probes`: requests for the agent's data center or zone, and how many more wait. */
export interface ProbeRequestsReply {
  readonly requests: readonly ProbeRequestWire[];
  readonly backlog: number;
}
