import type { Steps } from '../pipeline/selection/steps.js';

/**
 * Members (array elements, object members, and the values in them at any depth) written by one
 * `JSON.stringify` call between two yields of {@link jsonTextSteps}: about 0.2 ms of work.
 */
export const JSON_MEMBERS_PER_STEP = 1024;

/** One level of indentation: the admin replies are written as `JSON.stringify(value, null, 2)`. */
const GAP = '  ';

/**
 * Steps writing the text of `JSON.stringify(value, null, 2)`, byte for byte, so a reply of
 * megabytes (the `/status` of 20,000 records, a `/healthz` listing every record answering by its
 * fail-safe list) is written in slices by `runInSlices` instead of in one turn of the event loop
 * (issue 17). A value of at most {@link JSON_MEMBERS_PER_STEP} members is written by one
 * `JSON.stringify` call (re-indented); the elements of a larger array are written in runs of at
 * most that many members, one call and one yield per run, and a larger object or element is
 * walked here with `JSON.stringify`'s rules (ECMA-262 §25.5.2: `toJSON`, members whose value is
 * `undefined`, a function or a symbol left out of objects and written `null` in arrays; an element
 * in a run gets `toJSON` with its index in the run, which a `Date` ignores). Returns
 * `undefined` where `JSON.stringify` does (`undefined`, a function or a symbol at the top).
 * @throws TypeError as `JSON.stringify` does (a `bigint`); a cyclic value throws TypeError or RangeError.
 */
export function jsonTextSteps(value: unknown): Steps<string | undefined> {
  return write(value, '', '');
}

function* write(value: unknown, key: string, indent: string): Steps<string | undefined> {
  const v = withToJson(value, key);
  if (membersUpTo(v, JSON_MEMBERS_PER_STEP + 1) <= JSON_MEMBERS_PER_STEP) {
    const text = JSON.stringify(v, null, 2) as string | undefined;
    return text === undefined ? undefined : reindented(text, indent);
  }
  const inner = indent + GAP;
  if (Array.isArray(v)) {
    const parts: string[] = [];
    let i = 0;
    while (i < v.length) {
      // A run of elements small enough for one call, or one large element walked.
      let end = i;
      let members = 0;
      while (end < v.length) {
        const m = membersUpTo(v[end], JSON_MEMBERS_PER_STEP + 1 - members);
        if (members + m > JSON_MEMBERS_PER_STEP) break;
        members += m;
        end++;
      }
      if (end > i) {
        // `[\n  a,\n  b\n]` at this depth, without its brackets.
        const run = reindented(JSON.stringify(v.slice(i, end), null, 2), indent);
        parts.push(run.slice(2, run.length - indent.length - 2));
        i = end;
      } else {
        parts.push(inner + ((yield* write(v[i], String(i), inner)) ?? 'null'));
        i++;
      }
      yield;
    }
    return `[\n${parts.join(',\n')}\n${indent}]`;
  }
  const record = v as Record<string, unknown>;
  const parts: string[] = [];
  let members = 0;
  for (const k of Object.keys(record)) {
    members += membersUpTo(record[k], JSON_MEMBERS_PER_STEP + 1);
    const text = yield* write(record[k], k, inner);
    if (text !== undefined) parts.push(`${inner}${JSON.stringify(k)}: ${text}`);
    if (members >= JSON_MEMBERS_PER_STEP) {
      members = 0;
      yield;
    }
  }
  return parts.length === 0 ? '{}' : `{\n${parts.join(',\n')}\n${indent}}`;
}

/**
 * The number of values `JSON.stringify` would visit in `value` (1 for a scalar, 1 plus its
 * members' for an object or array), counted up to `limit` only: the walk stops there.
 */
function membersUpTo(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null || typeof (value as { toJSON?: unknown }).toJSON === 'function') return 1;
  let count = 1;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && count < limit; i++) count += membersUpTo(value[i], limit - count);
    return count;
  }
  for (const k in value) {
    if (count >= limit) break;
    if (Object.hasOwn(value, k)) count += membersUpTo((value as Record<string, unknown>)[k], limit - count);
  }
  return count;
}

/** The value `JSON.stringify` writes for `value` under `key`: `value.toJSON(key)` when it has one (a `Date`). */
function withToJson(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  return value;
}

/**
 * `JSON.stringify(_, null, 2)`'s text of a value nested at `indent`: its lines after the first
 * shifted right. Every line break in that text is one between members: a line break inside a
 * string is written `\n`.
 */
function reindented(text: string, indent: string): string {
  return indent === '' ? text : text.replaceAll('\n', `\n${indent}`);
}
