import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ConfigProblem } from '../../core/config/load.js';
import { MIN_AGENT_TOKEN_CHARS, type AgentCredentialConfig, type AgentsConfig } from './agentsSchema.js';

/** Who an agent is, as its credential says: what it may write for. */
export interface AgentIdentity {
  readonly name: string;
  /** The data center it measures (host, service and probe data); absent for a zone agent. */
  readonly dc?: string;
  /** The proximity zone it probes from (probe results only); absent for a data center agent. */
  readonly zone?: string;
  /** Its consumer group of the probe-request queue: `dc:<name>` or `zone:<id>` (agents of one DC share requests). */
  readonly group: string;
}

/** The identity a credential grants. */
export function identityOf(c: Pick<AgentCredentialConfig, 'name' | 'dc' | 'zone'>): AgentIdentity {
  return c.dc !== undefined ? { name: c.name, dc: c.dc, group: `dc:${c.dc}` } : { name: c.name, zone: c.zone!, group: `zone:${c.zone}` };
}

/**
 * The agents' bearer tokens (docs/PRODUCT.md §7: one credential per agent). A request's token is
 * compared with every configured one in constant time (SHA-256 digests, so lengths never leak),
 * and all are compared whatever matched, so the time taken says nothing about which token or how
 * much of it was right.
 */
export class AgentCredentials {
  private readonly entries: readonly { readonly identity: AgentIdentity; readonly digest: Buffer }[];

  /** `tokens[i]` is the token of `credentials[i]` (read from `token` or `tokenFile`). */
  constructor(credentials: readonly AgentCredentialConfig[], tokens: readonly string[]) {
    this.entries = credentials.map((c, i) => ({ identity: identityOf(c), digest: digest(tokens[i]!) }));
  }

  /** Agents configured. */
  get size(): number {
    return this.entries.length;
  }

  /** Every configured identity, in configuration order. */
  identities(): AgentIdentity[] {
    return this.entries.map((e) => e.identity);
  }

  /** The agent an `Authorization: Bearer <token>` header belongs to, or undefined (missing, malformed or unknown token). */
  identify(authorization: string | undefined): AgentIdentity | undefined {
    const given = digest(authorization?.startsWith('Bearer ') ? authorization.slice(7) : '');
    let found: AgentIdentity | undefined;
    for (const e of this.entries) if (timingSafeEqual(given, e.digest)) found ??= e.identity;
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The token of every credential, in order: `token`, or the trimmed contents of `tokenFile`
 * (relative to the configuration file).
 * @throws Error when a token file cannot be read (checked before by {@link agentFileReferenceProblems}).
 */
export function agentTokens(config: AgentsConfig, configFile: string): string[] {
  return config.credentials.map((c) => c.token ?? readFileSync(resolve(dirname(configFile), c.tokenFile!), 'utf8').trim());
}

/**
 * The agents' token files that are missing, not regular files or too short, each with its
 * configuration path (`agents.credentials[2].tokenFile`), for the composition root's file check.
 */
export function agentFileReferenceProblems(config: AgentsConfig, configFile: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  config.credentials.forEach((c, i) => {
    if (c.tokenFile === undefined) return;
    const path = `agents.credentials[${i}].tokenFile`;
    const full = resolve(dirname(configFile), c.tokenFile);
    try {
      if (!statSync(full).isFile()) problems.push({ path, message: `"${c.tokenFile}" is not a regular file` });
      else if (readFileSync(full, 'utf8').trim().length < MIN_AGENT_TOKEN_CHARS) {
        problems.push({ path, message: `"${c.tokenFile}" holds fewer than ${MIN_AGENT_TOKEN_CHARS} characters` });
      }
    } catch (e) {
      problems.push({ path, message: `cannot read "${c.tokenFile}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` });
    }
  });
  return problems;
}
