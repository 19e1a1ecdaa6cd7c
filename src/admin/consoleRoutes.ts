import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AdminReply, AdminRoute } from '../core/contracts/adminRoute.js';
import type { Engine } from '../pipeline/engine.js';
import type { EventStream } from './adminServer.js';
import { CONSOLE_HTML } from './consolePage.js';
import type { ConsoleFeed } from './consoleFeed.js';

/** `Host` names the console answers for: loopback only (a DNS-rebinding page names its own host). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** At most this many records per `GET /console/records`. */
export const CONSOLE_RECORDS_LIMIT = 200;

/**
 * Where `npm run build` writes the console's bundle (`console/build.mjs`): `dist/console-app/app.js`,
 * found from this module compiled (`dist/src/admin/`) or run from source (`src/admin/`, tests).
 */
const BUNDLE_CANDIDATES = ['../../console-app/app.js', '../../dist/console-app/app.js'].map((p) => fileURLToPath(new URL(p, import.meta.url)));

/** The bundle's text, or undefined when it is not built. */
function readBundle(): string | undefined {
  for (const file of BUNDLE_CANDIDATES) {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      // Not at this place: the other one.
    }
  }
  return undefined;
}

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
 * The operator console (read-only views without a token; its actions call the mutating routes
 * with the token the operator types, in the `Authorization` header): `GET /console` (the page),
 * `/console/app.js` (the bundle `npm run build` made from `console/`, read once; 503 when not
 * built), `/console/state` (the state the page shows, as JSON) and `/console/records?filter=`
 * (records with their policy stages and candidates, at most {@link CONSOLE_RECORDS_LIMIT} whose
 * name contains `filter`); `consoleStream` gives the live updates. Each refuses a foreign `Host`
 * ({@link consoleHostCheck}).
 */
export function consoleRoutes(feed: ConsoleFeed, engine: Engine): AdminRoute[] {
  const bundle = readBundle();
  return [
    {
      method: 'GET',
      path: '/console',
      mutating: false,
      handle: (req) => consoleHostCheck(req.headers) ?? { status: 200, text: CONSOLE_HTML, contentType: 'text/html; charset=utf-8' },
    },
    {
      method: 'GET',
      path: '/console/app.js',
      mutating: false,
      handle: (req) =>
        consoleHostCheck(req.headers) ??
        (bundle === undefined
          ? { status: 503, json: { error: 'the console is not built: run npm run build' } }
          : { status: 200, text: bundle, contentType: 'text/javascript; charset=utf-8' }),
    },
    {
      method: 'GET',
      path: '/console/state',
      mutating: false,
      async handle(req) {
        return consoleHostCheck(req.headers) ?? { status: 200, json: await feed.state() };
      },
    },
    {
      method: 'GET',
      path: '/console/records',
      mutating: false,
      handle(req) {
        const refused = consoleHostCheck(req.headers);
        if (refused) return refused;
        const filter = (req.url.searchParams.get('filter') ?? '').toLowerCase();
        const matching = engine.snapshot.records.filter((r) => r.name.includes(filter));
        return {
          status: 200,
          json: {
            total: matching.length,
            records: matching.slice(0, CONSOLE_RECORDS_LIMIT).map((r) => ({
              name: r.name,
              type: r.type,
              ttl: r.ttl,
              service: r.service,
              policy: r.pipeline.map((s) => `${s.slot}: ${s.name}`),
              candidates: r.candidates.map((c) => ({ dc: c.dc.name, endpoints: c.endpoints.map((e) => e.key) })),
              failsafe: r.failsafe.length,
            })),
          },
        };
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
