import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { FILE_SIZE_LIMITS, FileKindError, readRegularFile } from './regularFile.js';

/** One problem in a configuration file: where (`records[2].policy.pickDcCount`) and why. */
export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * A configuration that cannot be used. `problems` lists every problem found; the message holds
 * them one per line as `FILE: path: reason`.
 */
export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(problems.map((p) => `${file}: ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** A validated configuration and the file it came from. */
export interface LoadedConfig<T> {
  readonly file: string;
  readonly config: T;
}

/**
 * Reads, parses (YAML 1.2, so JSON works too) and validates a configuration file against `schema`.
 * @throws ConfigError listing every problem: unreadable file, YAML syntax (with line:column),
 *   schema violations and broken cross references, each with its path.
 */
export function loadConfigFileWith<S extends z.ZodType>(schema: S, file: string): LoadedConfig<z.output<S>> {
  return { file, config: parseConfigWith(schema, readConfigText(file), file) };
}

/**
 * The text of a configuration file: a regular file of at most `FILE_SIZE_LIMITS.config` bytes
 * (a FIFO or a device at the path fails at once instead of blocking or reading without end).
 * @throws ConfigError with the reason (`cannot read: ENOENT`, `is not a regular file (a FIFO)`).
 */
export function readConfigText(file: string): string {
  try {
    return readRegularFile(file, FILE_SIZE_LIMITS.config).toString('utf8');
  } catch (e) {
    throw new ConfigError(file, [{ path: '', message: e instanceof FileKindError ? e.reason : `cannot read: ${(e as Error).message}` }]);
  }
}

/**
 * Parses and validates configuration text against `schema`; `file` is only used in messages.
 * @throws ConfigError as {@link loadConfigFileWith}.
 */
export function parseConfigWith<S extends z.ZodType>(schema: S, text: string, file = '<config>'): z.output<S> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        return { path: pos ? `line ${pos.line}:${pos.col}` : '', message: `YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}` };
      }),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // The yaml library throws (rather than reporting a document error) for alias expansion
    // beyond maxAliasCount — a "billion laughs" document.
    throw new ConfigError(file, [{ path: '', message: `YAML: ${(e as Error).message}` }]);
  }
  const result = schema.safeParse(data);
  if (!result.success) throw new ConfigError(file, result.error.issues.flatMap(describeIssue));
  return result.data;
}

/** Formats a path as `records[2].policy.pickDcCount`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): ConfigProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({
      path: formatPath([...issue.path, k]),
      message: 'unknown key (not part of the configuration schema; check the spelling)',
    }));
  }
  if (issue.code === 'invalid_union' && 'options' in issue && Array.isArray(issue.options)) {
    return [{ path: formatPath(issue.path), message: `must be one of: ${issue.options.join(', ')}` }];
  }
  if (issue.code === 'invalid_type' && issue.message.includes('received undefined')) {
    return [{ path: formatPath(issue.path), message: `is required (${issue.expected})` }];
  }
  return [{ path: formatPath(issue.path), message: issue.message }];
}
