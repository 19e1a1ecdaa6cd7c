import { dirname, resolve } from 'node:path';
import { agentsCapability } from '../capabilities/agents/capability.js';
import { dnssecCapability } from '../capabilities/dnssec/capability.js';
import { geoCapability } from '../capabilities/geo/capability.js';
import { healthCapability } from '../capabilities/health/capability.js';
import { ConfigError, type ConfigProblem } from '../core/config/load.js';
import { FILE_SIZE_LIMITS, readRegularFile, referencedFileProblem } from '../core/config/regularFile.js';
import { doorFileReferences } from '../doors/doorReferences.js';
import type { z } from 'zod';
import { configSchema, type Config } from './configSchema.js';
import { LISTENERS } from './frontDoors.js';

/** Shortest admin token a `tokenFile` may hold: an empty token would let any request through. */
export const MIN_ADMIN_TOKEN_CHARS = 16;

/**
 * Checks the files a valid configuration refers to, so `gslbd check-config` and start-up fail in
 * the same way and before minutes of location loading, each a regular file under its size cap
 * (`FILE_SIZE_LIMITS`: a FIFO would block the read, `/dev/zero` never end it): the geo capability's files (`geo.compiled`,
 * `geo.sources[i]`: `geoCapability.fileReferenceProblems`), `listeners.admin.tokenFile`
 * (readable, at least {@link MIN_ADMIN_TOKEN_CHARS} characters), the admin listener's TLS files,
 * the agents' token files (`agentsCapability.fileReferenceProblems`), the files monitors name (every
 * check kind's `files`, such as an https monitor's `caFile`: `healthCapability.fileReferenceProblems`),
 * the files front doors name (`FrontDoorKind.files`: a TLS certificate) and the DNSSEC key files
 * (`dnssecCapability.keyFileReport`: both halves present and matching, zone and algorithm).
 * Relative paths are relative to the configuration file. Contents beyond that are
 * checked where they are read (a corrupt location file fails its load, naming the file). The
 * health state file is not checked: it may not exist yet.
 * @returns every problem, each with its configuration path; empty when all files are there.
 */
export function fileReferenceProblems(config: Config, configFile: string): ConfigProblem[] {
  return sectionFileProblems(config, configFile);
}

/**
 * The file problems of the sections of a file that did not pass the schema as a whole: each
 * top-level section (each listener of `listeners`) that passes its own schema has its files
 * checked as {@link fileReferenceProblems} checks them, so one `check-config` run lists the schema,
 * reference and zone-file problems and the missing files together.
 */
export function fileProblemsOfValidSections(raw: unknown, configFile: string): ConfigProblem[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const r = raw as Record<string, unknown>;
  const sections: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(configSchema.shape as Record<string, z.ZodType>)) {
    if (key === 'listeners') continue;
    const parsed = field.safeParse(r[key]);
    if (parsed.success) sections[key] = parsed.data;
  }
  const listeners: Record<string, unknown> = {};
  const rawListeners = (typeof r.listeners === 'object' && r.listeners !== null ? r.listeners : {}) as Record<string, unknown>;
  for (const s of LISTENERS) {
    if (rawListeners[s.name] === undefined) continue;
    const parsed = s.listener.safeParse(rawListeners[s.name]);
    if (parsed.success) listeners[s.name] = parsed.data;
  }
  sections.listeners = listeners;
  return sectionFileProblems(sections as Partial<Config>, configFile);
}

/** The files of the sections present in `sections` (every section of a valid configuration). */
function sectionFileProblems(sections: Partial<Config>, configFile: string): ConfigProblem[] {
  const base = dirname(configFile);
  const problems: ConfigProblem[] = [];
  // `full` is where the engine reads the file; `path` as configured, for the message.
  const regularFile = (path: string, key: string, maxBytes: number): string | undefined => {
    const full = resolve(base, path);
    const problem = referencedFileProblem(path, full, maxBytes);
    if (problem === undefined) return full;
    problems.push({ path: key, message: problem });
    return undefined;
  };
  if (sections.geo) problems.push(...geoCapability.fileReferenceProblems({ geo: sections.geo }, configFile));
  const admin = sections.listeners?.admin;
  const tokenFile = admin?.tokenFile;
  if (tokenFile !== undefined) {
    const full = regularFile(tokenFile, 'listeners.admin.tokenFile', FILE_SIZE_LIMITS.token);
    if (full !== undefined && readRegularFile(full, FILE_SIZE_LIMITS.token).toString('utf8').trim().length < MIN_ADMIN_TOKEN_CHARS) {
      problems.push({ path: 'listeners.admin.tokenFile', message: `"${tokenFile}" holds fewer than ${MIN_ADMIN_TOKEN_CHARS} characters` });
    }
  }
  if (sections.health) problems.push(...healthCapability.fileReferenceProblems({ health: sections.health }, configFile));
  const tls = admin?.tls;
  if (tls !== undefined) {
    regularFile(tls.certFile, 'listeners.admin.tls.certFile', FILE_SIZE_LIMITS.tls);
    regularFile(tls.keyFile, 'listeners.admin.tls.keyFile', FILE_SIZE_LIMITS.tls);
    if (tls.clientCaFile !== undefined) regularFile(tls.clientCaFile, 'listeners.admin.tls.clientCaFile', FILE_SIZE_LIMITS.tls);
  }
  if (sections.listeners) for (const f of doorFileReferences(LISTENERS, sections)) regularFile(f.path, f.key, FILE_SIZE_LIMITS.tls);
  // These two checks read only their own section; the lists stand in for sections that failed.
  const whole = { zones: [], datacenters: [], records: [], ...sections } as Config;
  if (sections.dnssec) problems.push(...dnssecCapability.keyFileReport(whole, configFile, Date.now()).problems);
  if (sections.agents) problems.push(...agentsCapability.fileReferenceProblems(whole, configFile));
  return problems;
}

/**
 * What is worth saying about the referenced files without refusing them: a DNSSEC private key
 * file every user may read, a signed zone none of whose keys is active now.
 */
export function fileReferenceWarnings(config: Config, configFile: string): ConfigProblem[] {
  return dnssecCapability.keyFileReport(config, configFile, Date.now()).warnings;
}

/**
 * {@link fileReferenceProblems} as an exception.
 * @throws ConfigError listing every missing or unusable file with its configuration path.
 */
export function checkFileReferences(config: Config, configFile: string): void {
  const problems = fileReferenceProblems(config, configFile);
  if (problems.length > 0) throw new ConfigError(configFile, problems);
}
