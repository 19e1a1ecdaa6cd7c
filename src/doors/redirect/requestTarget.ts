import { canonicalName } from '../../core/dns/name.js';

/** The host a request is for and its path with query, or why it cannot be answered. */
export type RequestTarget = { readonly ok: true; readonly host: string; readonly path: string } | { readonly ok: false; readonly reason: string };

/** `Host` header value (RFC 9110 §7.2): a name or an IP literal, an optional port; nothing else (no user info, no path). */
const AUTHORITY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_.])?)(?::\d{1,5})?$/;

/**
 * The host and path of one HTTP/1.x request (RFC 9112 §3.2):
 * - origin form (`/path?query`): the host from the one `Host` header (canonical: lower case, no
 *   trailing dot, port dropped); none, several, or one that is not `host[:port]` is refused;
 * - absolute form (`http://host/path?query`): the host from the target, the `Host` header
 *   ignored (RFC 9112 §3.2.2); a target with user info is refused;
 * - asterisk and authority forms (`OPTIONS *`, `CONNECT host:port`) are refused: nothing to redirect.
 * The path always starts with `/`, so appending it to a base URL cannot reach another host.
 * @param hostHeaders every `Host` header line of the request (Node's `headersDistinct.host`).
 */
export function requestTarget(target: string, hostHeaders: readonly string[] | undefined): RequestTarget {
  if (target.startsWith('/')) {
    if (hostHeaders === undefined || hostHeaders.length === 0) return { ok: false, reason: 'no Host header' };
    if (hostHeaders.length > 1) return { ok: false, reason: 'several Host headers' };
    const host = hostOf(hostHeaders[0]!.trim());
    return host === undefined ? { ok: false, reason: 'malformed Host header' } : { ok: true, host, path: target };
  }
  if (/^https?:\/\//i.test(target)) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return { ok: false, reason: 'malformed request target' };
    }
    if (url.username !== '' || url.password !== '') return { ok: false, reason: 'user info in the request target' };
    const host = hostOf(url.host);
    return host === undefined ? { ok: false, reason: 'malformed request target' } : { ok: true, host, path: `${url.pathname}${url.search}` };
  }
  return { ok: false, reason: 'not a path or an absolute URL' };
}

/** The canonical host of `host[:port]`, or undefined when the text is not one. */
function hostOf(authority: string): string | undefined {
  if (!AUTHORITY.test(authority)) return undefined;
  const host = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.replace(/:\d+$/, '');
  return canonicalName(host);
}

/** ASCII characters kept as they are in a redirect's path and query (RFC 3986 §3.3, §3.4: pchar, `/`, `?`); `%` is checked apart. */
const KEPT = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?") KEPT[c.charCodeAt(0)] = 1;

const HEX = /^[0-9A-Fa-f]{2}$/;

function percent(byte: number): string {
  return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * `path` (starting with `/`, query included) as it goes into a `Location` header: RFC 3986
 * path and query characters kept, valid `%XX` escapes kept, every other character
 * percent-encoded (control characters, spaces, `"`, `<`, `>`, `\`, `#`, a `%` without two hex
 * digits; characters above U+007F as their UTF-8 bytes, or as one byte below U+0100, which is how
 * Node hands over a request target's raw bytes). The result holds no character a header value or a
 * URL parser could read as the end of the path.
 */
export function encodeTarget(path: string): string {
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const code = path.codePointAt(i)!;
    if (code < 128 && KEPT[code] === 1) out += path[i];
    else if (code === 0x25 && HEX.test(path.slice(i + 1, i + 3))) out += '%';
    else if (code < 256) out += percent(code);
    else {
      // A lone surrogate becomes U+FFFD's bytes: Buffer encodes it so, where encodeURIComponent throws.
      for (const byte of Buffer.from(String.fromCodePoint(code), 'utf8')) out += percent(byte);
      if (code > 0xffff) i++;
    }
  }
  return out;
}

/**
 * The redirect URL: `base` (a normalised base URL: origin and a path without a trailing `/`)
 * followed by the encoded path and query of the request. Returns undefined — never another
 * site's URL — if the result does not parse to `base`'s own origin (it always does for a path
 * starting with `/`; the check is there so no request can ever produce an off-site URL).
 */
export function redirectUrl(base: string, path: string): string | undefined {
  if (!path.startsWith('/')) return undefined;
  const location = `${base}${encodeTarget(path)}`;
  try {
    return new URL(location).origin === new URL(base).origin ? location : undefined;
  } catch {
    return undefined;
  }
}
