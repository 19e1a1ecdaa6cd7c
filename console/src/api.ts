/**
 * The admin API as the console calls it: reads without a token (same origin, loopback), actions
 * with the operator's token in the `Authorization` header only. The token lives in this module's
 * memory for as long as the page is open: never in a cookie, the URL or the browser's storage.
 */

let token = '';

/** Keeps the token the operator typed (empty: none). */
export function setToken(value: string): void {
  token = value.trim();
}

/** Whether the operator gave a token. */
export function hasToken(): boolean {
  return token !== '';
}

/** A response body as JSON with its status; a body that is not JSON reads as `{error: text}`. */
export interface Reply<T> {
  status: number;
  ok: boolean;
  body: T & { error?: string };
}

async function reply<T>(res: Response): Promise<Reply<T>> {
  const text = await res.text();
  let body: T & { error?: string };
  try {
    body = JSON.parse(text) as T & { error?: string };
  } catch {
    body = { error: text } as T & { error?: string };
  }
  return { status: res.status, ok: res.ok, body };
}

/** GET `path` (a read-only route: no token). */
export async function get<T>(path: string): Promise<Reply<T>> {
  return reply<T>(await fetch(path, { headers: { accept: 'application/json' } }));
}

/** POST `body` to a read-only route (what-if: no token). */
export async function post<T>(path: string, body: unknown): Promise<Reply<T>> {
  return reply<T>(await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
}

/**
 * POST an operator action (`/health/override`, `/reload`): with the token when one was given,
 * without one otherwise, so the engine refuses it (401) and the page says so.
 */
export async function act<T>(path: string, body: unknown): Promise<Reply<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== '') headers.authorization = `Bearer ${token}`;
  return reply<T>(await fetch(path, { method: 'POST', headers, body: JSON.stringify(body) }));
}
