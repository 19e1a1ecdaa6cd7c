import type { AdminReply, AdminRoute } from '../core/contracts/adminRoute.js';
import type { EventStream } from './adminServer.js';
import { CONSOLE_HTML, CONSOLE_SCRIPT } from './consolePage.js';
import type { ConsoleFeed } from './consoleFeed.js';

/** `Host` names the console answers for: loopback only (a DNS-rebinding page names its own host). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Refuses a request whose `Host` is not a loopback name (with any port): a page from another
 * origin that rebinds its name to 127.0.0.1 sends its own name, and gets no data (403).
 */
export function consoleHostCheck(headers: Readonly<Record<string, string | string[] | undefined>> | undefined): AdminReply | undefined {
  const host = typeof headers?.host === 'string' ? headers.host.toLowerCase() : '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return LOOPBACK_HOSTS.has(name) ? undefined : { status: 403, json: { error: 'the console answers only for a loopback Host' } };
}

/**
 * The operator console (read-only, no token): `GET /console` (the page), `/console/app.js`, and
 * `/console/state` (the state the page shows, as JSON); `consoleStream` gives its live updates.
 * Each refuses a foreign `Host` ({@link consoleHostCheck}).
 */
export function consoleRoutes(feed: ConsoleFeed): AdminRoute[] {
  const page =
    (text: string, contentType: string): AdminRoute['handle'] =>
    (req) =>
      consoleHostCheck(req.headers) ?? { status: 200, text, contentType };
  return [
    { method: 'GET', path: '/console', mutating: false, handle: page(CONSOLE_HTML, 'text/html; charset=utf-8') },
    { method: 'GET', path: '/console/app.js', mutating: false, handle: page(CONSOLE_SCRIPT, 'text/javascript; charset=utf-8') },
    {
      method: 'GET',
      path: '/console/state',
      mutating: false,
      async handle(req) {
        return consoleHostCheck(req.headers) ?? { status: 200, json: await feed.state() };
      },
    },
  ];
}

/** `GET /console/events`: the console state as server-sent events (`state`), every few seconds. */
export function consoleStream(feed: ConsoleFeed): EventStream {
  return {
    path: '/console/events',
    allow: ({ headers }) => consoleHostCheck(headers),
    subscribe: (send) => feed.subscribe((state) => send('state', state)),
  };
}
