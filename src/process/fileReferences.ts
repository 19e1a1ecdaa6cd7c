import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { adminListenerSchema } from '../admin/listenerSchema.js';
import { geoCapability, geoRootSchema } from '../capabilities/geo/capability.js';
import type { GeoConfig } from '../capabilities/geo/geoSchema.js';
import { healthSectionSchema } from '../capabilities/health/healthSchema.js';
import { ConfigError, type ConfigProblem } from '../core/config/load.js';
import type { Config } from './configSchema.js';

/** Shortest admin token a `tokenFile` may hold: an empty token would let any request through. */
export const MIN_ADMIN_TOKEN_CHARS = 16;

/**
 * Checks the files a valid configuration refers to, so `gslbd check-config` and start-up fail in
 * the same way and before minutes of location loading: the geo capability's files (`geo.compiled`,
 * `geo.sources[i]`: `geoCapability.fileReferenceProblems`), `listeners.admin.tokenFile`
 * (readable, at least {@link MIN_ADMIN_TOKEN_CHARS} characters) and every https monitor's
 * `caFile`. Relative paths are relative to the configuration file. Contents beyond that are
 * checked where they are read (a corrupt location file fails its load, naming the file). The
 * health state file is not checked: it may not exist yet.
 * @returns every problem, each with its configuration path; empty when all files are there.
 */
export function fileReferenceProblems(config: Config, configFile: string): ConfigProblem[] {
  return sectionFileProblems({ geo: config.geo, tokenFile: config.listeners.admin?.tokenFile, monitors: config.health.monitors }, configFile);
}

/**
 * The file problems of the sections of a file that did not pass the schema as a whole: each
 * section that passes its own schema (`geo`, `listeners.admin`, `health`) has its files checked,
 * so one `check-config` run lists the schema problems and the missing files together.
 */
export function fileProblemsOfValidSections(raw: unknown, configFile: string): ConfigProblem[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const r = raw as { geo?: unknown; listeners?: { admin?: unknown }; health?: unknown };
  const geo = geoRootSchema.safeParse(r.geo);
  const admin = adminListenerSchema.safeParse(r.listeners?.admin);
  const health = healthSectionSchema.safeParse(r.health ?? { monitors: [] });
  return sectionFileProblems(
    {
      geo: geo.success ? geo.data : undefined,
      tokenFile: admin.success ? admin.data.tokenFile : undefined,
      monitors: health.success ? health.data.monitors : [],
    },
    configFile,
  );
}

/** The sections whose files are checked. */
interface FileSections {
  readonly geo: GeoConfig | undefined;
  readonly tokenFile: string | undefined;
  readonly monitors: Config['health']['monitors'];
}

function sectionFileProblems(sections: FileSections, configFile: string): ConfigProblem[] {
  const base = dirname(configFile);
  const problems: ConfigProblem[] = [];
  // `full` is where the engine reads the file; `path` as configured, for the message.
  const regularFile = (path: string, key: string): string | undefined => {
    const full = resolve(base, path);
    try {
      if (!statSync(full).isFile()) problems.push({ path: key, message: `"${path}" is not a regular file` });
      else return full;
    } catch (e) {
      problems.push({ path: key, message: `cannot read "${path}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` });
    }
    return undefined;
  };
  if (sections.geo) problems.push(...geoCapability.fileReferenceProblems({ geo: sections.geo }, configFile));
  const tokenFile = sections.tokenFile;
  if (tokenFile !== undefined) {
    const full = regularFile(tokenFile, 'listeners.admin.tokenFile');
    if (full !== undefined && readFileSync(full, 'utf8').trim().length < MIN_ADMIN_TOKEN_CHARS) {
      problems.push({ path: 'listeners.admin.tokenFile', message: `"${tokenFile}" holds fewer than ${MIN_ADMIN_TOKEN_CHARS} characters` });
    }
  }
  sections.monitors.forEach((m, i) => {
    if (m.type === 'https' && m.caFile !== undefined) regularFile(m.caFile, `health.monitors[${i}].caFile`);
  });
  return problems;
}

/**
 * {@link fileReferenceProblems} as an exception.
 * @throws ConfigError listing every missing or unusable file with its configuration path.
 */
export function checkFileReferences(config: Config, configFile: string): void {
  const problems = fileReferenceProblems(config, configFile);
  if (problems.length > 0) throw new ConfigError(configFile, problems);
}
