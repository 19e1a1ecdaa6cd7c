import { parse } from 'csv-parse/sync';
import { FILE_SIZE_LIMITS, readRegularFile } from '../../core/config/regularFile.js';
import { parseIp } from '../../core/net/ipAddress.js';
import type { Family } from '../../core/lpm/tiling.js';

/**
 * How a loader treats a bad line: `strict` fails the whole load at the first one (the running
 * data stays in use), `lenient` skips it, counts it and keeps the first few messages.
 */
export type LoadMode = 'strict' | 'lenient';

/** A problem in a location file, with the `file:line` it is on. */
export class SourceLineError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'SourceLineError';
  }
}

/** Lines a lenient load skipped. */
export interface SkippedLines {
  count: number;
  /** The first {@link MAX_KEPT} messages, `file:line: reason`. */
  readonly first: string[];
}

const MAX_KEPT = 20;

/**
 * Reads a comma-separated file (RFC 4180 quoting, via csv-parse) and calls `onRow` with the
 * trimmed fields and the 1-based line of each record. Blank lines are skipped; lines starting
 * with `#` are comments. `onRow` throws an Error for a bad row; in strict mode it becomes a
 * {@link SourceLineError}, in lenient mode the row is skipped and counted in `skipped`.
 * @throws SourceLineError (strict mode, or a file that is not valid CSV at all); Error when the
 *   file cannot be read.
 */
export function readDelimitedFile(file: string, mode: LoadMode, skipped: SkippedLines, onRow: (fields: string[], line: number) => void): void {
  const text = readRegularFile(file, FILE_SIZE_LIMITS.location).toString('utf8');
  const skip = (line: number, reason: string): void => {
    if (mode === 'strict') throw new SourceLineError(file, line, reason);
    skipped.count++;
    if (skipped.first.length < MAX_KEPT) skipped.first.push(`${file}:${line}: ${reason}`);
  };
  try {
    // Rows are handed over from on_record, in file order, so a bad row and a CSV syntax error
    // are reported in the order they occur.
    parse(text, {
      comment: '#',
      comment_no_infix: true,
      skip_empty_lines: true,
      relax_column_count: true,
      trim: true,
      skip_records_with_error: mode === 'lenient',
      on_skip: (err) => {
        skip(Number(err?.lines ?? 0), err?.message ?? 'malformed CSV');
        return undefined;
      },
      on_record: (record: string[], context) => {
        try {
          onRow(record, context.lines);
        } catch (e) {
          if (e instanceof SourceLineError) throw e;
          skip(context.lines, (e as Error).message);
        }
        return null;
      },
    });
  } catch (e) {
    if (e instanceof SourceLineError) throw e;
    const err = e as Error & { lines?: number };
    throw new SourceLineError(file, err.lines ?? 0, err.message);
  }
}

/**
 * An address field of a location file: dotted IPv4, IPv6 text, or an unsigned decimal integer
 * (IPv4 below 2^32 unless `numericFamily` is 6). IPv4-mapped IPv6 text counts as IPv4.
 * @throws Error naming the field.
 */
export function parseAddressField(text: string, numericFamily: Family | undefined): { family: Family; value: bigint } {
  if (/^\d+$/.test(text)) {
    const value = BigInt(text);
    const family: Family = numericFamily ?? (value < 1n << 32n ? 4 : 6);
    if (value >= 1n << (family === 4 ? 32n : 128n)) throw new Error(`address ${text} is out of the IPv${family} range`);
    return { family, value };
  }
  let a;
  try {
    a = parseIp(text);
  } catch {
    throw new Error(`"${text}" is not an address (dotted IPv4, IPv6 or a decimal number)`);
  }
  if (a.family === 4) return { family: 4, value: BigInt(a.w0) };
  return { family: 6, value: (BigInt(a.w0) << 96n) | (BigInt(a.w1) << 64n) | (BigInt(a.w2) << 32n) | BigInt(a.w3) };
}

/**
 * The `from`/`to` address fields of a row as an inclusive range.
 * @throws Error when either is not an address, the families differ, or `to` is below `from`.
 */
export function parseRangeFields(from: string, to: string, numericFamily: Family | undefined): { family: Family; start: bigint; end: bigint } {
  const a = parseAddressField(from, numericFamily);
  const b = parseAddressField(to, numericFamily ?? a.family);
  if (a.family !== b.family) throw new Error(`"${from}" and "${to}" are of different address families`);
  if (b.value < a.value) throw new Error(`range end ${to} is below its start ${from}`);
  return { family: a.family, start: a.value, end: b.value };
}

/**
 * A coordinate field: empty means unknown.
 * @throws Error when it is not a number in [-limit, limit].
 */
export function parseCoordinate(text: string, name: string, limit: number): number | undefined {
  if (text === '') return undefined;
  const v = Number(text);
  if (!Number.isFinite(v) || Math.abs(v) > limit) throw new Error(`${name} "${text}" is not a number in −${limit}…${limit}`);
  return v;
}
