import { CORE_SCHEMA, load as loadFast } from 'js-yaml';
import { createRequire } from 'node:module';
import type * as YamlLibrary from 'yaml';
import type { z } from 'zod';
import { FILE_SIZE_LIMITS, FileKindError, readRegularFile } from './regularFile.js';

/**
 * The `yaml` library, loaded on first use: only a file the fast reader refuses (a problem to report
 * with its line and column, or YAML features it does not read alike) needs it, and loading it
 * costs about 80 ms of CPU at every start (issue 26: start-up time).
 */
let yamlLibrary: typeof YamlLibrary | undefined;
function yaml(): typeof YamlLibrary {
  return (yamlLibrary ??= createRequire(import.meta.url)('yaml') as typeof YamlLibrary);
}

/** One problem in a configuration file: where (`records[2].policy.pickDcCount`) and why. */
export interface ConfigProblem {
  readonly path: string;
  readonly message: string;
  /** Where in the file (1-based line and column), when the problem has a place in the text. */
  readonly line?: number;
  readonly col?: number;
}

/**
 * A configuration that cannot be used. `problems` lists every problem found; the message holds
 * them one per line as `FILE:LINE:COL: path: reason` (`FILE: path: reason` for a problem
 * without a place in the text, such as an unreadable file), the form compilers and editors
 * jump to.
 */
export class ConfigError extends Error {
  /**
   * @param data the parsed document when the YAML was read but did not pass the schema (so a
   *   caller can check the sections that did on their own); undefined otherwise.
   */
  constructor(
    readonly file: string,
    readonly problems: readonly ConfigProblem[],
    readonly data?: unknown,
  ) {
    super(problems.map((p) => `${file}${p.line !== undefined ? `:${p.line}:${p.col ?? 1}` : ''}: ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n'));
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
export function parseConfigWith<S extends z.ZodType>(schema: S, text: string, file = '<config>', expand?: ConfigExpansion): z.output<S> {
  const fast = parsedFast(text);
  if (fast !== undefined) {
    const expanded = expand ? expand(fast.data) : { data: fast.data, problems: [] };
    const result = expanded.problems.length === 0 ? schema.safeParse(expanded.data) : undefined;
    if (result?.success) return result.data;
  }
  return parseConfigSlow(schema, text, file, expand);
}

/**
 * A step between reading the YAML and validating it: content the file names (a zone's RFC 1035
 * zone file) joins the document, so it is validated and cross-checked as if written in it.
 * `problems` are those of the content it includes (what it could include is in `data`); they are
 * reported with the schema's problems, all in one run.
 */
export type ConfigExpansion = (data: unknown) => {
  readonly data: unknown;
  readonly problems: readonly ConfigProblem[];
  /**
   * Where the part of the document at a path came from, when the expansion included it from a
   * file (a zone file's record): a problem found there later (the schema, the cross references)
   * names that file's line instead of a path the YAML does not have.
   */
  readonly placeOf?: (path: readonly PropertyKey[]) => IncludedPlace | undefined;
};

/** The place of content an expansion included from a file of its own. */
export interface IncludedPlace {
  /** The configuration path its problems are reported under (`zones[0].zoneFile`). */
  readonly path: string;
  /** The file as configured, and the 1-based line and column of the included element in it. */
  readonly file: string;
  readonly line: number;
  readonly col?: number;
  /** How many leading elements of a document path this place stands for (the rest is named in the message). */
  readonly depth: number;
}

/** `FILE:LINE:COL` of an included place. */
function includedAt(place: IncludedPlace): string {
  return `${place.file}:${place.line}${place.col !== undefined ? `:${place.col}` : ''}`;
}

/**
 * Text the fast reader (YAML 1.2's core schema) is known to read as the `yaml` library does: no
 * anchors, aliases or merge keys (the `yaml` library bounds alias expansion, `maxAliasCount`;
 * js-yaml shares the objects), no tags or
 * directives (`%YAML 1.1` changes the `yaml` library's schema), no number with `_` and no `0b`
 * literal (js-yaml reads them as numbers, YAML 1.2's core schema as strings).
 */
const FAST_UNSAFE = /[&!%]|<<|\d_|_\d|\b0b[01]/;

/**
 * The configuration read by js-yaml, about ten times faster than the `yaml` library's document
 * (a 20,000-record file: ~2 s against ~28 s on a loaded machine; the document keeps every node's
 * position, which only a problem's message needs). Undefined when the text may read differently
 * ({@link FAST_UNSAFE}) or js-yaml refuses it (a syntax error, a duplicate key, several
 * documents): the `yaml` library then reads it and reports the problems with their positions.
 */
export function parsedFast(text: string): { data: unknown } | undefined {
  if (FAST_UNSAFE.test(text)) return undefined;
  try {
    return { data: loadFast(text, { schema: CORE_SCHEMA }) };
  } catch {
    return undefined;
  }
}

/** The `yaml` library's document: every problem of the text and of the schema with its line and column. */
function parseConfigSlow<S extends z.ZodType>(schema: S, text: string, file: string, expand?: ConfigExpansion): z.output<S> {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, merge: true, lineCounter });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        return {
          path: '',
          message: `YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
          ...(pos ? { line: pos.line, col: pos.col } : {}),
        };
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
  const expanded = expand ? expand(data) : { data, problems: [] };
  data = expanded.data;
  const result = schema.safeParse(data);
  if (!result.success || expanded.problems.length > 0) {
    if (result.success) throw new ConfigError(file, expanded.problems, data);
    const issues = [...result.error.issues, ...referenceIssuesOfValidParts(schema, data, result.error.issues)];
    throw new ConfigError(
      file,
      [
        ...expanded.problems,
        ...issues.flatMap(describeIssue).map(({ rawPath, atKey, firstPath, ...p }) => {
          // A duplicate names both places: its own position, and where the first definition is.
          const firstIncluded = firstPath && expanded.placeOf?.(firstPath);
          const first = firstPath && !firstIncluded && positionOf(doc, lineCounter, firstPath, false);
          const message = firstIncluded
            ? `${p.message} (first defined at ${includedAt(firstIncluded)})`
            : first
              ? `${p.message} (first defined at ${formatPath(firstPath)}${first.line !== undefined ? `, line ${first.line}:${first.col}` : ''})`
              : p.message;
          // Content included from another file: its file and line, as that file's own problems.
          const included = expanded.placeOf?.(rawPath);
          if (included) {
            const below = formatPath(rawPath.slice(included.depth));
            return { path: included.path, message: `${includedAt(included)}: ${below ? `${below}: ` : ''}${message}` };
          }
          return { ...p, message, ...positionOf(doc, lineCounter, rawPath, atKey) };
        }),
      ],
      data,
    );
  }
  return result.data;
}

/**
 * The cross-reference problems (custom issues: unknown names, duplicates) of the parts of a file
 * that passed the schema, when other parts did not: a schema error that stops zod (a wrong type,
 * a missing field) skips the whole-file checks, which would leave every dangling reference
 * unreported until the schema error is fixed. Each element of a top-level list is kept when it
 * passes alone, each other top-level value when it passes; the checks then run on what was kept.
 *
 * So that a dropped element does not make its references look dangling, a problem that quotes
 * the `name` of a dropped element (`unknown data center "b"` when `datacenters[1]` had a schema
 * error), or a name below it (`"www.example.test" is not inside any configured zone` when the zone
 * `example.test` had one), is left out, and so is any problem already reported.
 * @returns the extra issues, with paths into the original document.
 */
function referenceIssuesOfValidParts(schema: z.ZodType, data: unknown, reported: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const shape = (schema._zod.def as { shape?: Record<string, z.ZodType> }).shape;
  if (shape === undefined || typeof data !== 'object' || data === null || Array.isArray(data)) return [];
  const kept: Record<string, unknown> = {};
  /** Per list: the original index of each kept element. */
  const indexes = new Map<string, number[]>();
  const droppedNames = new Set<string>();
  for (const [key, value] of Object.entries(data)) {
    const field = shape[key];
    if (field === undefined) continue;
    if (field.safeParse(value).success) {
      kept[key] = value;
      continue;
    }
    const element = Array.isArray(value) ? listElement(field) : undefined;
    if (element === undefined) continue;
    const at: number[] = [];
    const elements: unknown[] = [];
    (value as unknown[]).forEach((v, i) => {
      if (element.safeParse(v).success) {
        at.push(i);
        elements.push(v);
      } else if (typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string') {
        droppedNames.add((v as { name: string }).name);
      }
    });
    kept[key] = elements;
    indexes.set(key, at);
  }
  const partial = schema.safeParse(kept);
  if (partial.success) return [];
  const seen = new Set(reported.map((i) => `${formatPath(i.path)}\u0000${i.message}`));
  const out: z.core.$ZodIssue[] = [];
  for (const issue of partial.error.issues) {
    if (issue.code !== 'custom') continue;
    if (quotesDroppedName(issue.message, droppedNames)) continue;
    const path = originalPath(issue.path, indexes);
    const params = issue.params as { firstPath?: PropertyKey[] } | undefined;
    const moved = {
      ...issue,
      path,
      ...(params?.firstPath ? { params: { ...params, firstPath: originalPath(params.firstPath, indexes) } } : {}),
    } as z.core.$ZodIssue;
    const key = `${formatPath(path)}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(moved);
    }
  }
  return out;
}

/** Whether `message` quotes one of `names`, or a DNS name below one of them. */
function quotesDroppedName(message: string, names: ReadonlySet<string>): boolean {
  if (names.size === 0) return false;
  for (const [, quoted] of message.matchAll(/"([^"]*)"/g)) {
    for (const n of names) if (quoted === n || quoted!.endsWith(`.${n}`)) return true;
  }
  return false;
}

/** The element schema of a list field (through optional, default and similar wrappers), or undefined. */
function listElement(field: z.core.$ZodType): z.ZodType | undefined {
  let s: z.core.$ZodType | undefined = field;
  while (s !== undefined) {
    const def = s._zod.def as { type: string; element?: z.ZodType; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
    if (def.type === 'array') return def.element;
    s = def.innerType ?? def.in;
  }
  return undefined;
}

/** A path into the kept lists, as a path into the original document. */
function originalPath(path: readonly PropertyKey[], indexes: ReadonlyMap<string, number[]>): PropertyKey[] {
  const at = typeof path[0] === 'string' ? indexes.get(path[0]) : undefined;
  if (at === undefined || typeof path[1] !== 'number') return [...path];
  return [path[0]!, at[path[1]] ?? path[1], ...path.slice(2)];
}

/**
 * The line and column of the node at `path` in the YAML document: the key itself for an unknown
 * key (`atKey`), else the value; for a missing key, the nearest enclosing node that exists.
 */
function positionOf(doc: YamlLibrary.Document, lines: YamlLibrary.LineCounter, path: readonly PropertyKey[], atKey: boolean): { line?: number; col?: number } {
  const { isMap, isNode, isScalar } = yaml();
  const at = (offset: number): { line: number; col: number } => lines.linePos(offset);
  if (atKey && path.length > 0) {
    const map = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
    if (isMap(map)) {
      const pair = map.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === path.at(-1));
      if (pair && isNode(pair.key) && pair.key.range) return at(pair.key.range[0]);
    }
  }
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return at(node.range[0]);
  }
  return {};
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

/** A problem of a schema issue, with the raw path to find its place in the text by. */
type IssueProblem = ConfigProblem & { readonly rawPath: readonly PropertyKey[]; readonly atKey: boolean; readonly firstPath?: readonly PropertyKey[] };

function describeIssue(issue: z.core.$ZodIssue): IssueProblem[] {
  const at = (message: string): IssueProblem => ({ path: formatPath(issue.path), message, rawPath: issue.path, atKey: false });
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({
      path: formatPath([...issue.path, k]),
      message: 'unknown key (not part of the configuration schema; check the spelling)',
      rawPath: [...issue.path, k],
      atKey: true,
    }));
  }
  // A union without a message of its own (a custom one says it best).
  if (issue.code === 'invalid_union' && issue.errors.length > 0 && issue.message === 'Invalid input') {
    // A union of forms (a TTL as seconds or as `1h`): the one form the value has explains it best.
    const ofItsForm = issue.errors.filter((errs) => !(errs.length === 1 && errs[0]!.code === 'invalid_type'));
    if (ofItsForm.length === 1) return ofItsForm[0]!.flatMap((i) => describeIssue({ ...i, path: [...issue.path, ...i.path] } as z.core.$ZodIssue));
    if (ofItsForm.length === 0) {
      // No form fits the value's type: name every form.
      const expected = [...new Set(issue.errors.map((errs) => (errs[0] as { expected?: string }).expected))].join(' or ');
      const received = /received (\w+)/.exec(issue.errors[0]![0]!.message)?.[1];
      return [at(`Invalid input: expected ${expected}${received ? `, received ${received}` : ''}`)];
    }
  }
  if (issue.code === 'invalid_union' && 'options' in issue && Array.isArray(issue.options)) {
    return [at(`must be one of: ${issue.options.join(', ')}`)];
  }
  if (issue.code === 'invalid_type' && issue.message.includes('received undefined')) {
    return [at(`is required (${issue.expected})`)];
  }
  // Cross-reference checks name where a duplicate was defined first (`params.firstPath`).
  const firstPath = issue.code === 'custom' ? (issue.params as { firstPath?: PropertyKey[] } | undefined)?.firstPath : undefined;
  return [firstPath ? { ...at(issue.message), firstPath } : at(issue.message)];
}
