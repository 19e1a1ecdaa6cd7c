/**
 * A reader of RFC 1035 master files (zone files, §5), for a zone's static records
 * (`src/pipeline/config/zoneFileInclude.ts`). Our own, not an npm library: the ones on npm
 * (dns-zonefile, dnsz, zonefile-parser) either know a fixed set of types, lose the line of an
 * entry (a problem must name `file:line`) or do not follow `(`…`)` and escapes as BIND does, and
 * the per-type data is parsed by `presentation.ts` anyway.
 *
 * Syntax: `$ORIGIN` (relative to the current origin), `$TTL` (BIND units: `1h`, `2d`), `@` (the
 * origin), relative names (the origin appended), an omitted owner (the previous entry's), TTL and
 * class (`IN` only) in either order or omitted (the TTL then `$TTL`, else the last explicit TTL as
 * RFC 1035 §5.1 says, else none), parentheses over lines, `;` comments, quoted strings with `\X`
 * and `\DDD` escapes. `$INCLUDE` and `$GENERATE` are refused.
 */

/** One resource record of a master file, names absolute (no trailing dot), data fields as written. */
export interface MasterFileEntry {
  /** 1-based line where the entry starts. */
  readonly line: number;
  /** 1-based column of the entry's first field (its owner, or the TTL, class or type when the owner is omitted). */
  readonly col: number;
  /** The owner, absolute, lower case, without the trailing dot (`www.example.test`). */
  readonly owner: string;
  /** Seconds; undefined when neither the entry, `$TTL` nor an earlier entry gave one. */
  readonly ttl: number | undefined;
  /** Type mnemonic, upper case (`A`, `SOA`). */
  readonly type: string;
  /** The data fields: names already made absolute (no trailing dot), quoted fields with their quotes and escapes as written. */
  readonly fields: readonly MasterFileToken[];
}

/** One field of an entry. */
export interface MasterFileToken {
  /** The text as written (quotes and escapes included), or a name made absolute. */
  readonly raw: string;
  readonly quoted: boolean;
  readonly line: number;
}

/** A problem at one line of the file. */
export interface MasterFileProblem {
  readonly line: number;
  readonly message: string;
}

/** What {@link parseMasterFile} read: the entries in file order and every problem found. */
export interface MasterFile {
  readonly entries: readonly MasterFileEntry[];
  readonly problems: readonly MasterFileProblem[];
}

const TTL_UNITS: Readonly<Record<string, number>> = { w: 604800, d: 86400, h: 3600, m: 60, s: 1 };

/**
 * Seconds of a TTL or SOA timer written in seconds or with BIND's units (`1h30m`), or undefined
 * when the text is not one (RFC 2181 §8: at most 2^31 − 1).
 */
export function masterFileTtl(text: string): number | undefined {
  if (!/^(\d+[wdhms]?)+$/i.test(text)) return undefined;
  const seconds = [...text.toLowerCase().matchAll(/(\d+)([wdhms]?)/g)].reduce((sum, [, n, unit]) => sum + Number(n) * (TTL_UNITS[unit || 's'] ?? 1), 0);
  return seconds <= 2147483647 ? seconds : undefined;
}

/** The logical lines of a master file: tokens up to a newline outside parentheses. */
interface LogicalLine {
  readonly line: number;
  /** 1-based column of the first token (1 before any: a line that opens with `(`). */
  col: number;
  /** True when the line starts with whitespace: the owner is omitted. */
  readonly blankOwner: boolean;
  readonly tokens: MasterFileToken[];
}

/** Splits the text into logical lines (RFC 1035 §5.1: parentheses continue a line, `;` starts a comment). */
function logicalLines(text: string, problems: MasterFileProblem[]): LogicalLine[] {
  const out: LogicalLine[] = [];
  let line = 1;
  let depth = 0;
  let current: LogicalLine | undefined;
  let atLineStart = true;
  let i = 0;
  /** Offset of the current physical line's first character. */
  let lineStart = 0;
  const end = (): void => {
    if (current && current.tokens.length > 0) out.push(current);
    current = undefined;
  };
  const entry = (): LogicalLine => (current ??= { line, col: 1, blankOwner: false, tokens: [] });
  const push = (token: MasterFileToken, start: number): void => {
    const l = entry();
    if (l.tokens.length === 0 && l.line === line) l.col = start - lineStart + 1;
    l.tokens.push(token);
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
      lineStart = i;
      if (depth === 0) {
        end();
        atLineStart = true;
      }
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      if (atLineStart && depth === 0 && current === undefined) current = { line, col: 1, blankOwner: true, tokens: [] };
      atLineStart = false;
      i++;
      continue;
    }
    atLineStart = false;
    if (c === ';') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '(') {
      entry();
      depth++;
      i++;
      continue;
    }
    if (c === ')') {
      if (depth === 0) problems.push({ line, message: 'a ")" without "("' });
      else depth--;
      i++;
      continue;
    }
    const start = i;
    const tokenLine = line;
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\n') break;
        i += text[i] === '\\' ? 2 : 1;
      }
      if (text[i] !== '"') {
        problems.push({ line: tokenLine, message: 'a quoted string is not closed on its line' });
        continue;
      }
      i++;
      push({ raw: text.slice(start, i), quoted: true, line: tokenLine }, start);
      continue;
    }
    // A quoted part inside a field (`alpn="h2,h3"`) belongs to the field.
    while (i < text.length && !' \t\r\n;()'.includes(text[i]!)) {
      if (text[i] === '"') {
        i++;
        while (i < text.length && text[i] !== '"' && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1;
        if (text[i] === '"') i++;
        continue;
      }
      i += text[i] === '\\' ? 2 : 1;
    }
    push({ raw: text.slice(start, i), quoted: false, line: tokenLine }, start);
  }
  if (depth > 0) problems.push({ line, message: 'a "(" is not closed at the end of the file' });
  end();
  return out;
}

/** `name` made absolute against `origin` (both without trailing dot; `@` is the origin), lower case. */
function absolute(name: string, origin: string): string {
  if (name === '@') return origin;
  if (name === '.') return '';
  if (name.endsWith('.') && !name.endsWith('\\.')) return name.slice(0, -1).toLowerCase();
  return (origin === '' ? name : `${name}.${origin}`).toLowerCase();
}

/** Index of the name fields in each type's data (made absolute against the origin). */
const NAME_FIELDS: Readonly<Record<string, readonly number[]>> = {
  CNAME: [0],
  NS: [0],
  PTR: [0],
  MX: [1],
  SRV: [3],
  NAPTR: [5],
  SVCB: [1],
  HTTPS: [1],
  SOA: [0, 1],
};

/**
 * Reads a master file whose initial origin is `origin` (the zone's name, no trailing dot).
 * Every problem is collected with its line (the reader goes on with the next entry); an entry with
 * a problem is left out.
 */
export function parseMasterFile(text: string, origin: string): MasterFile {
  const problems: MasterFileProblem[] = [];
  const entries: MasterFileEntry[] = [];
  let currentOrigin = origin.toLowerCase().replace(/\.$/, '');
  let defaultTtl: number | undefined;
  let lastTtl: number | undefined;
  let previousOwner: string | undefined;
  for (const l of logicalLines(text, problems)) {
    const tokens = l.tokens;
    const first = tokens[0]!;
    if (!l.blankOwner && !first.quoted && first.raw.startsWith('$')) {
      const directive = first.raw.toUpperCase();
      if (directive === '$ORIGIN' && tokens.length === 2) currentOrigin = absolute(tokens[1]!.raw, currentOrigin);
      else if (directive === '$TTL' && tokens.length === 2 && masterFileTtl(tokens[1]!.raw) !== undefined) defaultTtl = masterFileTtl(tokens[1]!.raw);
      else if (directive === '$INCLUDE') problems.push({ line: l.line, message: '$INCLUDE is not supported: name each file in the configuration' });
      else problems.push({ line: l.line, message: `${first.raw} is not supported here (only $ORIGIN name and $TTL ttl)` });
      continue;
    }
    let k = 0;
    let owner: string;
    if (l.blankOwner) {
      if (previousOwner === undefined) {
        problems.push({ line: l.line, message: 'the first entry has no owner' });
        continue;
      }
      owner = previousOwner;
    } else {
      owner = absolute(first.raw, currentOrigin);
      k = 1;
    }
    previousOwner = owner;
    let ttl: number | undefined;
    let klass = false;
    let problem: string | undefined;
    for (let n = 0; n < 2 && k < tokens.length; n++) {
      const t = tokens[k]!.raw;
      const seconds = masterFileTtl(t);
      if (seconds !== undefined && ttl === undefined) {
        ttl = seconds;
        k++;
      } else if (/^(IN|CH|HS|CS|CLASS\d+)$/i.test(t) && !klass) {
        if (t.toUpperCase() !== 'IN') problem = `class ${t} is not served (only IN)`;
        klass = true;
        k++;
      } else break;
    }
    const typeToken = tokens[k];
    if (problem === undefined && (typeToken === undefined || typeToken.quoted)) problem = 'the entry has no type';
    if (problem !== undefined) {
      problems.push({ line: l.line, message: problem });
      continue;
    }
    const type = typeToken!.raw.toUpperCase();
    if (ttl !== undefined) lastTtl = ttl;
    const nameFields = NAME_FIELDS[type] ?? [];
    const fields = tokens.slice(k + 1).map((t, i) => (nameFields.includes(i) && !t.quoted ? { ...t, raw: absolute(t.raw, currentOrigin) || '.' } : t));
    entries.push({ line: l.line, col: l.col, owner, ttl: ttl ?? defaultTtl ?? lastTtl, type, fields });
  }
  return { entries, problems };
}

/**
 * The octets of a character string as written in a master file (quotes removed, `\X` and `\DDD`
 * resolved), read as UTF-8 text (the configuration's TXT strings are text).
 * @throws Error when a `\DDD` escape is above 255.
 */
export function characterString(raw: string): string {
  const body = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw;
  const octets: number[] = [];
  const bytes = Buffer.from(body, 'utf8');
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x5c) {
      octets.push(bytes[i]!);
      continue;
    }
    const digits = bytes.subarray(i + 1, i + 4).toString('latin1');
    if (/^\d{3}$/.test(digits)) {
      const value = Number(digits);
      if (value > 255) throw new Error(`\\${digits} is not an octet`);
      octets.push(value);
      i += 3;
    } else if (i + 1 < bytes.length) {
      octets.push(bytes[i + 1]!);
      i++;
    }
  }
  return Buffer.from(octets).toString('utf8');
}
