/**
 * The fields of record data in presentation form (RFC 1035 §5.1): whitespace separates fields, a
 * field in double quotes (or a quoted part of a field) may hold whitespace, and `\X` and `\DDD` escape one octet inside any
 * field. Each field is returned as its octets (latin1 text: one character per octet), with
 * whether it was quoted.
 * @throws Error when a quote is not closed or a `\DDD` escape is above 255.
 */
export function presentationFields(text: string): { readonly value: string; readonly quoted: boolean }[] {
  const out: { value: string; quoted: boolean }[] = [];
  const bytes = Buffer.from(text, 'utf8');
  let i = 0;
  while (i < bytes.length) {
    while (i < bytes.length && isSpace(bytes[i]!)) i++;
    if (i >= bytes.length) break;
    const quoted = bytes[i] === QUOTE;
    // A quote may also open inside a field (`alpn="h2 h3"`, RFC 9460 §2.1): it runs to the next quote.
    let inQuotes = false;
    const value: number[] = [];
    while (i < bytes.length) {
      const c = bytes[i]!;
      if (c === QUOTE) {
        inQuotes = !inQuotes;
        i++;
        if (!inQuotes && quoted) break;
        continue;
      }
      if (!inQuotes && isSpace(c)) break;
      if (c === BACKSLASH) {
        const [octet, next] = escapedOctet(bytes, i);
        value.push(octet);
        i = next;
        continue;
      }
      value.push(c);
      i++;
    }
    if (inQuotes) throw new Error('a quoted string is not closed');
    out.push({ value: Buffer.from(value).toString('latin1'), quoted });
  }
  return out;
}

/**
 * A character string in presentation form: in double quotes, with `"` and `\` escaped and every
 * octet outside printable ASCII written `\DDD` (RFC 1035 §5.1), so any octets print and parse back.
 * @param octets one character per octet (latin1), as {@link presentationFields} returns them.
 */
export function quotedString(octets: string): string {
  let out = '"';
  for (let i = 0; i < octets.length; i++) {
    const c = octets.charCodeAt(i);
    if (c === QUOTE || c === BACKSLASH) out += `\\${octets[i]}`;
    else if (c < 0x20 || c > 0x7e) out += `\\${String(c).padStart(3, '0')}`;
    else out += octets[i];
  }
  return `${out}"`;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** The octet of the escape at `bytes[i]` (a backslash) and the index after it. */
function escapedOctet(bytes: Buffer, i: number): [number, number] {
  const d = bytes.subarray(i + 1, i + 4).toString('latin1');
  if (/^\d{3}$/.test(d)) {
    const n = Number(d);
    if (n > 255) throw new Error(`escape \\${d} is above 255`);
    return [n, i + 4];
  }
  if (i + 1 >= bytes.length) throw new Error('a backslash ends the text');
  return [bytes[i + 1]!, i + 2];
}
