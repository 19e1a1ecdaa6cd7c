import { z } from 'zod';

/** Why a setting needs a restart (one line for the reload's warning). */
export interface RestartOnlyMeta {
  readonly why: string;
}

/**
 * The schemas of settings a reload does not apply (listener sockets, the log line format, the
 * shared state store, which the process opens once at start). A registry of its own, not zod's
 * global one: its entries must not appear in the JSON Schema (`gslbd schema`), which ajv reads in
 * strict mode.
 */
const RESTART_ONLY = z.registry<RestartOnlyMeta>();

/**
 * Marks a setting only a restart applies: a reload that changes it warns (`restartSettings`,
 * `changedRestartSettings`).
 * @returns a copy of `schema`, marked: shared field schemas (an address, a port) stay unmarked
 *   where other settings use them.
 */
export function restartOnly<T extends z.ZodType>(schema: T, why: string): T {
  const marked = schema.clone() as T;
  RESTART_ONLY.add(marked, { why });
  return marked;
}

/** One restart-only setting: its path in the configuration (`[]` stands for every element of an array, `*` for every value of a record). */
export interface RestartSetting {
  readonly path: readonly string[];
  readonly why: string;
}

/**
 * Every restart-only setting inside `schema`, found by walking it (objects, arrays, records,
 * optional/default/nullable wrappers, pipes, unions): the list follows the schemas, so a new
 * field marked with {@link restartOnly} is warned about without a list to keep.
 * @returns settings in schema order; a marked object's fields are not listed apart.
 */
export function restartSettings(schema: z.core.$ZodType): RestartSetting[] {
  const out: RestartSetting[] = [];
  walk(schema, [], out, new Set());
  return out;
}

/** The parts of a zod 4 definition the walk reads (`schema._zod.def`), by kind. */
interface SchemaDef {
  readonly type: string;
  readonly shape?: Record<string, z.core.$ZodType>;
  readonly element?: z.core.$ZodType;
  readonly valueType?: z.core.$ZodType;
  readonly innerType?: z.core.$ZodType;
  readonly in?: z.core.$ZodType;
  readonly out?: z.core.$ZodType;
  readonly options?: readonly z.core.$ZodType[];
}

function walk(schema: z.core.$ZodType, path: string[], out: RestartSetting[], seen: Set<z.core.$ZodType>): void {
  const meta = RESTART_ONLY.get(schema);
  if (meta !== undefined) {
    out.push({ path, why: meta.why });
    return;
  }
  if (seen.has(schema)) return;
  seen.add(schema);
  const def = schema._zod.def as unknown as SchemaDef;
  const inner = (child: z.core.$ZodType | undefined, segment?: string): void => {
    if (child !== undefined) walk(child, segment === undefined ? path : [...path, segment], out, seen);
  };
  switch (def.type) {
    case 'object':
      for (const [key, field] of Object.entries(def.shape ?? {})) inner(field, key);
      return;
    case 'array':
      inner(def.element, '[]');
      return;
    case 'record':
      inner(def.valueType, '*');
      return;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      inner(def.innerType);
      return;
    case 'pipe':
      inner(def.in);
      inner(def.out);
      return;
    case 'union':
      for (const option of def.options ?? []) inner(option);
      return;
    default:
      // Leaves (strings, numbers, enums, …) and kinds without a configuration shape (lazy, transform).
      return;
  }
}

/**
 * The restart-only settings whose value differs between two configurations (JSON comparison of
 * the values at each path; `[]` and `*` compare every element).
 * @returns the changed settings, each once (a path reached through two union options counts once).
 */
export function changedRestartSettings(settings: readonly RestartSetting[], before: unknown, after: unknown): RestartSetting[] {
  const changed = new Map<string, RestartSetting>();
  for (const s of settings) {
    const key = s.path.join('.');
    if (!changed.has(key) && JSON.stringify(valuesAt(before, s.path)) !== JSON.stringify(valuesAt(after, s.path))) changed.set(key, s);
  }
  return [...changed.values()];
}

function valuesAt(value: unknown, path: readonly string[]): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [string, ...string[]];
  if (head === '[]') return Array.isArray(value) ? value.map((v) => valuesAt(v, rest)) : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (head === '*') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, valuesAt(v, rest)]));
  return valuesAt((value as Record<string, unknown>)[head], rest);
}
