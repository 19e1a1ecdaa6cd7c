import { domainToASCII } from 'node:url';

/**
 * Domain names inside the engine are kept in one canonical form: ASCII-lower-cased (RFC 4343:
 * only A–Z fold, other bytes compare exactly), no trailing dot, the root as `''`. Configured names
 * may be written in Unicode; they are converted to A-labels (IDNA, via the WHATWG URL domain
 * algorithm that Node implements) before anything else sees them.
 */

/** Maximum length of a name in presentation form without the trailing dot (RFC 1035 §2.3.4: 255 octets on the wire). */
export const MAX_NAME_LENGTH = 253;
/** Maximum length of a label (RFC 1035 §2.3.4). */
export const MAX_LABEL_LENGTH = 63;

/** Lower-cases A–Z only, as RFC 4343 §3 requires for name comparison. */
export function asciiLower(name: string): string {
  let needs = false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 65 && c <= 90) {
      needs = true;
      break;
    }
  }
  if (!needs) return name;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : name[i];
  }
  return out;
}

/** Canonical form of a name received on the wire or from a DNS server: lower-cased, no trailing dot. */
export function canonicalName(name: string): string {
  const lower = asciiLower(name);
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Canonical form of a configured name: IDNA A-labels, lower-cased, no trailing dot.
 * `*` is allowed as the whole first label (wildcard owner).
 * @throws Error with the reason when a label is empty or longer than 63 octets, the name is
 *   longer than 253 octets, or it contains characters a host name cannot hold.
 */
export function configuredName(text: string): string {
  const trimmed = text.endsWith('.') ? text.slice(0, -1) : text;
  if (trimmed === '') return '';
  const wildcard = trimmed === '*' || trimmed.startsWith('*.');
  const rest = wildcard ? trimmed.slice(2) : trimmed;
  let ascii = rest;
  if (/[^\x21-\x7e]/.test(rest)) {
    ascii = domainToASCII(rest);
    if (ascii === '') throw new Error(`"${text}" is not a valid internationalised domain name`);
  }
  const name = asciiLower(wildcard ? (rest === '' ? '*' : `*.${ascii}`) : ascii);
  validateName(name, text);
  return name;
}

function validateName(name: string, original: string): void {
  if (name.length > MAX_NAME_LENGTH) throw new Error(`"${original}" is longer than ${MAX_NAME_LENGTH} characters`);
  for (const label of name.split('.')) {
    if (label === '') throw new Error(`"${original}" has an empty label`);
    if (label.length > MAX_LABEL_LENGTH) throw new Error(`"${original}" has a label longer than ${MAX_LABEL_LENGTH} characters`);
    if (!/^[a-z0-9_*-]+$/.test(label)) throw new Error(`"${original}" has a label with characters other than letters, digits, '-' and '_'`);
  }
}

/** True when `name` equals `zone` or lies below it (both canonical; an escaped dot is no boundary). */
export function isInZone(name: string, zone: string): boolean {
  if (zone === '') return true;
  if (name === zone) return true;
  const dot = name.length - zone.length - 1;
  return dot > 0 && name.endsWith(zone) && name.charCodeAt(dot) === 0x2e && !escapedAt(name, dot);
}

/**
 * The parent of a canonical name (`a.b.c` → `b.c`, `c` → `''`). Names from the wire keep a dot
 * inside a label escaped (`a\.b.c` is the label `a.b` under `c`, RFC 1035 §5.1); such a dot is
 * not a boundary, while one after an escaped backslash (`a\\.c`) is.
 */
export function parentName(name: string): string {
  let dot = name.indexOf('.');
  if (dot > 0 && name.charCodeAt(dot - 1) === BACKSLASH) {
    while (dot > 0 && escapedAt(name, dot)) dot = name.indexOf('.', dot + 1);
  }
  return dot < 0 ? '' : name.slice(dot + 1);
}

const BACKSLASH = 0x5c;

/** True when the character at `i` is escaped: preceded by an odd run of backslashes. */
function escapedAt(name: string, i: number): boolean {
  let run = 0;
  while (i - run - 1 >= 0 && name.charCodeAt(i - run - 1) === BACKSLASH) run++;
  return run % 2 === 1;
}

/** Joins a relative owner (`www`, `@`, `*.dyn`) to its zone. */
export function ownerInZone(relative: string, zone: string): string {
  if (relative === '@') return zone;
  return zone === '' ? relative : `${relative}.${zone}`;
}
