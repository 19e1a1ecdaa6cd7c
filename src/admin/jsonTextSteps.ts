import type { Steps } from '../pipeline/selection/steps.js';

/**
 * Members (array elements, object members, and the values in them at any depth) written by one
 * `JSON.stringify` call between two yields of {@link jsonTextSteps}: about 0.2 ms of work.
 */
export const JSON_MEMBERS_PER_STEP = 1024;

/**
 * How the text is laid out: `indented` as `JSON.stringify(value, null, 2)` writes it (the admin
 * replies), `compact` as `JSON.stringify(value)` (an event stream's `data:` line: no line break).
 */
export type JsonLayout = 'indented' | 'compact';

interface Layout {
  /** One level of indentation. */
  readonly gap: string;
  /** Between `[` or `{` or `,` and a member. */
  readonly newline: string;
  /** After a member's name. */
  readonly colon: string;
  /** `JSON.stringify`'s text of a value nested at `indent`. */
  stringify(value: unknown, indent: string): string;
  /** The members of an array's text, without its brackets and the line breaks next to them. */
  inner(arrayText: string, indent: string): string;
}

const LAYOUTS: Readonly<Record<JsonLayout, Layout>> = {
  indented: {
    gap: '  ',
    newline: '\n',
    colon: ': ',
    stringify: (value, indent) => reindented(JSON.stringify(value, null, 2), indent),
    // `[\n  a,\n  b\n]` at this depth.
    inner: (text, indent) => text.slice(2, text.length - indent.length - 2),
  },
  compact: {
    gap: '',
    newline: '',
    colon: ':',
    stringify: (value) => JSON.stringify(value),
    inner: (text) => text.slice(1, -1),
  },
};

/** Characters of text gathered into one chunk of a {@link JsonText} (a write to the socket each). */
export const JSON_CHUNK_CHARS = 256 * 1024;

/** The text of a JSON value in chunks of about {@link JSON_CHUNK_CHARS}, and its length in UTF-8 bytes (a `content-length`). */
export interface JsonText {
  readonly chunks: readonly string[];
  readonly bytes: number;
}

/**
 * Steps writing the text of `JSON.stringify(value, null, 2)` (`compact`: `JSON.stringify(value)`),
 * byte for byte, so a reply of
 * megabytes (the `/status` of 20,000 records, a `/healthz` listing every record answering by its
 * fail-safe list) is written in slices by `runInSlices` instead of in one turn of the event loop
 * (issue 17). A value of at most {@link JSON_MEMBERS_PER_STEP} members is written by one
 * `JSON.stringify` call (re-indented); the elements of a larger array are written in runs of at
 * most that many members, one call and one yield per run, and a larger object or element is
 * walked here with `JSON.stringify`'s rules (ECMA-262 §25.5.2: `toJSON`, members whose value is
 * `undefined`, a function or a symbol left out of objects and written `null` in arrays; an element
 * in a run gets `toJSON` with its index in the run, which a `Date` ignores). The text comes in
 * chunks, each counted in UTF-8 bytes as it is made, so no step joins or measures the whole of it.
 * Returns `undefined` where `JSON.stringify` does (`undefined`, a function or a symbol at the top).
 * @throws TypeError as `JSON.stringify` does (a `bigint`); a cyclic value throws TypeError or RangeError.
 */
export function* jsonTextSteps(value: unknown, layout: JsonLayout = 'indented'): Steps<JsonText | undefined> {
  const v = withToJson(value, '');
  if (omitted(v)) return undefined;
  const out = new ChunkedText();
  yield* write(v, '', LAYOUTS[layout], out);
  return out.finish();
}

/** Text gathered in pieces and joined into chunks of about {@link JSON_CHUNK_CHARS}. */
class ChunkedText {
  private readonly chunks: string[] = [];
  private pieces: string[] = [];
  private chars = 0;
  private bytes = 0;

  push(piece: string): void {
    this.pieces.push(piece);
    this.chars += piece.length;
    if (this.chars >= JSON_CHUNK_CHARS) this.flush();
  }

  finish(): JsonText {
    this.flush();
    return { chunks: this.chunks, bytes: this.bytes };
  }

  private flush(): void {
    if (this.pieces.length === 0) return;
    const chunk = this.pieces.join('');
    this.chunks.push(chunk);
    this.bytes += Buffer.byteLength(chunk);
    this.pieces = [];
    this.chars = 0;
  }
}

/** Writes `v` (a value `toJSON` was applied to, not omitted) nested at `indent`. */
function* write(v: unknown, indent: string, layout: Layout, out: ChunkedText): Steps<void> {
  if (membersUpTo(v, JSON_MEMBERS_PER_STEP + 1) <= JSON_MEMBERS_PER_STEP) {
    out.push(layout.stringify(v, indent));
    return;
  }
  const inner = indent + layout.gap;
  if (Array.isArray(v)) {
    out.push('[');
    let i = 0;
    while (i < v.length) {
      out.push(i === 0 ? layout.newline : `,${layout.newline}`);
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
        out.push(layout.inner(layout.stringify(v.slice(i, end), indent), indent));
        i = end;
      } else {
        const element = withToJson(v[i], String(i));
        out.push(inner);
        if (omitted(element)) out.push('null');
        else yield* write(element, inner, layout, out);
        i++;
      }
      yield;
    }
    out.push(`${layout.newline}${indent}]`);
    return;
  }
  const record = v as Record<string, unknown>;
  out.push('{');
  let any = false;
  let members = 0;
  for (const k of Object.keys(record)) {
    const member = withToJson(record[k], k);
    if (omitted(member)) continue;
    out.push(`${any ? ',' : ''}${layout.newline}${inner}${JSON.stringify(k)}${layout.colon}`);
    any = true;
    members += membersUpTo(member, JSON_MEMBERS_PER_STEP + 1);
    yield* write(member, inner, layout, out);
    if (members >= JSON_MEMBERS_PER_STEP) {
      members = 0;
      yield;
    }
  }
  out.push(any ? `${layout.newline}${indent}}` : '}');
}

/** Whether `JSON.stringify` leaves `v` out (an object member) or writes it `null` (an array element). */
function omitted(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
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
