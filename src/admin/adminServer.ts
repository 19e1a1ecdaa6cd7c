import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { Server as NetServer, Socket } from 'node:net';
import type { AdminReply, AdminRoute, RouteSink } from '../core/contracts/adminRoute.js';
import type { Logger } from '../core/telemetry/logger.js';
import { listenTcpServer } from '../doors/takenOverServer.js';
import { runInSlices, SLICE_MS } from '../pipeline/selection/steps.js';
import { jsonTextSteps, type JsonText } from './jsonTextSteps.js';

/** Largest request body accepted (bytes); larger ones get 413. */
export const MAX_BODY_BYTES = 1 << 20;

/** PEM certificate chain and key the admin listener serves HTTPS with, and the CA client certificates must be signed by (optional). */
export interface AdminTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa?: Buffer;
}

/**
 * Bounds of the admin listener, so that no client, with or without the token, can take the
 * engine's file descriptors (one local client once held ~20,000 slow connections: TCP DNS and
 * reloads then failed with EMFILE). Connections over a bound are closed as soon as they are accepted.
 */
export interface AdminLimits {
  /** Open connections in all. */
  readonly maxConnections: number;
  /**
   * Open connections from one client address, enforced once the listener holds half of
   * `maxConnections`: below that, one client's parallel requests (a scraper, `gslbd ctl`, a test
   * suite) are never refused; above it, no client holds more than its share.
   */
  readonly maxConnectionsPerClient: number;
  /** Time to receive a request's headers (ms), from its first byte or the connection. */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request (ms). */
  readonly requestTimeoutMs: number;
  /**
   * A kept-alive connection with no new request is closed after this (ms). A request being handled
   * has no timeout (a reload of a large file takes seconds).
   */
  readonly idleTimeoutMs: number;
  /**
   * Open event streams (`AdminServer.stream`, the console's live updates), counted apart from
   * `maxConnections`: a connection that becomes a stream leaves the admin bounds, so subscribed
   * consoles never crowd out `gslbd ctl`, scrapers and reloads; one more gets 503.
   */
  readonly maxEventStreams: number;
  /** A comment line is sent on every event stream this often (ms), so proxies and clients see it alive. */
  readonly heartbeatMs: number;
  /**
   * A route's JSON reply and an event stream's data are written in slices of about this long (ms;
   * `runInSlices`), so a reply of megabytes never holds the event loop the front doors answer on
   * (issue 17). 0 makes every step a slice (tests count the turns other events get).
   */
  readonly replySliceMs: number;
}

/** The admin listener's bounds: far above what operators' tools and scrapers open, far below the descriptor limit. */
export const ADMIN_LIMITS: AdminLimits = {
  maxConnections: 64,
  maxConnectionsPerClient: 16,
  headersTimeoutMs: 5000,
  requestTimeoutMs: 15000,
  idleTimeoutMs: 10000,
  maxEventStreams: 16,
  heartbeatMs: 15000,
  replySliceMs: SLICE_MS,
};

/**
 * A server-sent event stream (HTML Living Standard §9.2): `subscribe` is called once per client
 * with a function that sends one event (its data as JSON) and returns what ends the subscription.
 * `allow` may refuse a request (the console's `Host` check) with its reply.
 */
export interface EventStream {
  readonly path: string;
  allow?(req: { readonly headers: Readonly<Record<string, string | string[] | undefined>> }): AdminReply | undefined;
  subscribe(send: (event: string, data: unknown) => void): () => void;
}

/** `Authorization: Bearer <token>`; the scheme is case-insensitive (RFC 9110 §11.1), one or more spaces before the token (RFC 6750 §2.1). */
const BEARER = /^bearer +([^ ]+) *$/i;

/**
 * The admin HTTP listener (docs/PRODUCT.md §7), loopback by default; HTTPS when given {@link AdminTls}
 * (a client CA makes a client certificate signed by it mandatory: the TLS handshake fails without). Mutating routes need
 * `Authorization: Bearer <token>`: 401 without or with a wrong token, 403 when no token is
 * configured (mutation disabled). Bad JSON gets 400, unknown paths 404, wrong methods 405 with
 * `Allow` (RFC 9110 §15.5.6); a GET or DELETE ignores any body (RFC 9110 §9.3.1, §9.3.5); a failing
 * handler gets 500 and a log line, and the listener keeps serving. Connections are bounded
 * ({@link AdminLimits}).
 */
export class AdminServer implements RouteSink {
  private readonly routes = new Map<string, AdminRoute>();
  private server: Server | undefined;
  /** Open connections by client address. */
  private readonly perClient = new Map<string, number>();
  /** Connections admitted and not closed yet. */
  private openConnections = 0;
  /** Connections that became event streams (no longer in the counts above). */
  private readonly streaming = new WeakSet<Socket>();
  private openStreams = 0;
  private readonly streams = new Map<string, EventStream>();
  /** The last event's data and its text ({@link serialised}). */
  private lastEventData: unknown;
  private lastEventText: Promise<JsonText | undefined> = Promise.resolve(undefined);
  port = 0;

  constructor(
    private token: string | undefined,
    private readonly log: Logger,
    private readonly tls?: AdminTls,
    private readonly limits: AdminLimits = ADMIN_LIMITS,
  ) {}

  /**
   * Replaces the admin token (a reload with a new `token` or `tokenFile`); the next request is
   * checked against it and the old token stops working. `undefined` disables mutating routes.
   */
  setToken(token: string | undefined): void {
    this.token = token;
  }

  /** Adds (or replaces) the route for its method and path. */
  route(r: AdminRoute): void {
    this.routes.set(`${r.method} ${r.path}`, r);
  }

  /** Adds a server-sent event stream at `GET stream.path` (no token; bounded by `maxEventStreams`). */
  stream(stream: EventStream): void {
    this.streams.set(stream.path, stream);
  }

  /** Open event streams now. */
  get eventStreams(): number {
    return this.openStreams;
  }

  /**
   * Starts listening; port 0 picks a free port (read it from {@link port}). `takenOver` is the
   * listening socket of the process this one replaces (`gslbd ctl replace`): listened on instead.
   * @throws Error when the address cannot be bound.
   */
  async start(address: string, port: number, takenOver?: NetServer): Promise<void> {
    const { limits } = this;
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      // The first request arrived: Node's header and request timeouts take over from here.
      req.socket.setTimeout(0);
      this.serve(req, res).catch((e: unknown) => {
        this.log.error({ err: e }, 'admin request failed');
        if (!res.headersSent) send(res, { status: 500, json: { error: 'internal error' } });
      });
    };
    const bounds = {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.idleTimeoutMs,
      // How often the headers and request timeouts are checked (Node's default is 30 s).
      connectionsCheckingInterval: Math.max(100, Math.min(1000, limits.headersTimeoutMs / 4)),
    };
    const tls = this.tls;
    const server: Server = tls
      ? createTlsServer(
          {
            ...bounds,
            cert: tls.cert,
            key: tls.key,
            ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
            minVersion: 'TLSv1.2',
          },
          handler,
        )
      : createServer(bounds, handler);
    // Node's own cap leaves room for the event streams; admit() holds the admin connections to theirs.
    server.maxConnections = limits.maxConnections + limits.maxEventStreams;
    server.on('connection', (socket: Socket) => this.admit(socket));
    this.port = await listenTcpServer(server, takenOver, { port, host: address });
    this.server = server;
  }

  /** The listening socket, for a replacement process (undefined before {@link start}). */
  get listening(): NetServer | undefined {
    return this.server;
  }

  /**
   * Hand-over to a replacement process listening on the same socket: stops accepting, lets the
   * requests being handled finish (the `replace` request itself answers first) and closes idle
   * kept-alive connections, whose clients open new ones to the replacement.
   */
  release(): void {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.close();
    s.closeIdleConnections();
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /**
   * Counts a new connection against its client's bound once the listener is half full (over it:
   * closed at once, before any byte is read), and closes it if it sends nothing within the header
   * timeout (Node's header timeout starts with the first byte of a request).
   */
  private admit(socket: Socket): void {
    const client = socket.remoteAddress ?? '';
    const open = this.perClient.get(client) ?? 0;
    const full = this.openConnections >= this.limits.maxConnections;
    if (full || (open >= this.limits.maxConnectionsPerClient && this.openConnections >= this.limits.maxConnections / 2)) {
      socket.destroy();
      return;
    }
    this.perClient.set(client, open + 1);
    this.openConnections++;
    socket.once('close', () => {
      if (this.streaming.has(socket)) {
        this.openStreams--;
        return;
      }
      this.openConnections--;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left === 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    });
    socket.setTimeout(this.limits.headersTimeoutMs, () => socket.destroy());
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    const stream = req.method === 'GET' ? this.streams.get(url.pathname) : undefined;
    if (stream) {
      req.resume();
      this.openStream(stream, req, res);
      return;
    }
    const route = this.routes.get(`${req.method} ${url.pathname}`);
    if (!route) {
      const allowed = [...this.routes.values()].filter((r) => r.path === url.pathname).map((r) => r.method);
      req.resume();
      if (allowed.length === 0) send(res, { status: 404, json: { error: 'not found' } });
      else send(res, { status: 405, json: { error: `method ${req.method} not allowed` } }, { allow: [...new Set(allowed)].sort().join(', ') });
      return;
    }
    if (route.mutating) {
      const denied = this.authorise(req);
      if (denied) {
        req.resume();
        this.audit(req, url, denied.status, undefined);
        send(res, denied);
        return;
      }
    }
    if (route.method === 'GET' || route.method === 'DELETE') {
      // Content in a GET or DELETE has no defined meaning (RFC 9110 §9.3.1, §9.3.5): drained, not parsed.
      req.resume();
      const reply = await route.handle({ url, body: undefined, headers: req.headers });
      if (route.mutating) this.audit(req, url, reply.status, undefined);
      await this.sendInSlices(res, reply);
      return;
    }
    const body = await readBody(req);
    const reply = body.ok ? await route.handle({ url, body: body.value, headers: req.headers }) : body.reply;
    if (route.mutating) this.audit(req, url, reply.status, body.ok ? body.value : undefined);
    await this.sendInSlices(res, reply);
  }

  /**
   * Sends a route's reply: its `text`, or its `json` written as {@link send} writes it
   * (`JSON.stringify(json, null, 2)` and a line break) in slices of `replySliceMs`
   * ({@link jsonTextSteps}) and sent in chunks of about 256 KiB (`JSON_CHUNK_CHARS`), never joined: `/status` of
   * 20,000 records is 3.5 MB, once written in one turn that held every front door's queries
   * for 50–450 ms.
   */
  private async sendInSlices(res: ServerResponse, r: AdminReply): Promise<void> {
    if (r.text !== undefined) {
      sendBody(res, r, r.text);
      return;
    }
    const json = await runInSlices(jsonTextSteps(r.json ?? {}), this.limits.replySliceMs);
    const chunks = json?.chunks ?? [];
    res.writeHead(r.status, { 'content-type': r.contentType ?? 'application/json', 'content-length': (json?.bytes ?? 0) + 1 });
    for (const chunk of chunks) res.write(chunk);
    res.end('\n');
  }

  /**
   * The audit log: one `info` line (`audit: true`) per operator action, i.e. per request to a
   * mutating route, refused ones included, with the client address, the route, the status
   * answered and the request body when it is small (larger bodies, metric pushes, by size only).
   */
  private audit(req: IncomingMessage, url: URL, status: number, body: unknown): void {
    const text = body === undefined ? '' : JSON.stringify(body);
    this.log.info(
      {
        audit: true,
        client: req.socket.remoteAddress,
        method: req.method,
        path: url.pathname,
        status,
        ...(text.length <= AUDIT_BODY_CHARS ? (body === undefined ? {} : { body }) : { bodyChars: text.length }),
      },
      status < 300 ? 'admin action' : 'admin action refused',
    );
  }

  /**
   * Turns the request's connection into an event stream: it leaves the admin connection counts
   * for the stream count (503 over `maxEventStreams`), gets a heartbeat comment every
   * `heartbeatMs`, and is never reused for another request.
   */
  private openStream(stream: EventStream, req: IncomingMessage, res: ServerResponse): void {
    const refused = stream.allow?.({ headers: req.headers });
    if (refused) {
      send(res, refused);
      return;
    }
    if (this.openStreams >= this.limits.maxEventStreams) {
      send(res, { status: 503, json: { error: `${this.limits.maxEventStreams} event streams open: try again later` } }, { 'retry-after': '10' });
      return;
    }
    const socket = req.socket;
    this.streaming.add(socket);
    this.openStreams++;
    this.openConnections--;
    const client = socket.remoteAddress ?? '';
    const left = (this.perClient.get(client) ?? 1) - 1;
    if (left === 0) this.perClient.delete(client);
    else this.perClient.set(client, left);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'close' });
    res.write(': gslbd\n\n');
    // Events leave in the order they were sent; each one's text is written in slices.
    let sending = Promise.resolve();
    const unsubscribe = stream.subscribe((event, data) => {
      sending = sending
        .then(() => this.serialised(data))
        .then((text) => {
          if (socket.destroyed) return;
          res.write(`event: ${event}\ndata: `);
          for (const chunk of text?.chunks ?? []) res.write(chunk);
          res.write('\n\n');
        })
        .catch((e: unknown) => this.log.error({ err: e, event }, 'event not sent'));
    });
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.limits.heartbeatMs);
    heartbeat.unref();
    socket.once('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
    });
  }

  /**
   * `JSON.stringify(data)`'s text written in slices of `replySliceMs` ({@link jsonTextSteps},
   * compact: a `data:` line holds no line break), once per object: an update sent to every
   * subscriber is serialised once. A console's state with 20,000 records in their fail-safe
   * fallback is 3.7 MB, once written in one turn at every update.
   */
  private serialised(data: unknown): Promise<JsonText | undefined> {
    if (data !== this.lastEventData || typeof data !== 'object' || data === null) {
      this.lastEventText = runInSlices(jsonTextSteps(data, 'compact'), this.limits.replySliceMs);
      this.lastEventData = data;
    }
    return this.lastEventText;
  }

  private authorise(req: IncomingMessage): AdminReply | undefined {
    if (this.token === undefined) return { status: 403, json: { error: 'no admin token configured: mutating endpoints are disabled' } };
    const given = Buffer.from(BEARER.exec(req.headers.authorization ?? '')?.[1] ?? '');
    const want = Buffer.from(this.token);
    if (given.length !== want.length || !timingSafeEqual(given, want)) return { status: 401, json: { error: 'missing or wrong admin token' } };
    return undefined;
  }
}

/** Request bodies up to this many characters of JSON are written into the audit log whole. */
const AUDIT_BODY_CHARS = 4096;

type BodyResult = { ok: true; value: unknown } | { ok: false; reply: AdminReply };

function readBody(req: IncomingMessage): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        resolve({ ok: false, reply: { status: 413, json: { error: `body larger than ${MAX_BODY_BYTES} bytes` } } });
      } else if (size === 0) {
        resolve({ ok: true, value: undefined });
      } else {
        try {
          resolve({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (e) {
          resolve({ ok: false, reply: { status: 400, json: { error: `body is not valid JSON: ${(e as Error).message}` } } });
        }
      }
    });
    req.on('error', () => resolve({ ok: false, reply: { status: 400, json: { error: 'request aborted' } } }));
  });
}

/** Sends a small reply of the listener's own (errors, refusals) in one go; a route's reply goes through `sendInSlices`. */
function send(res: ServerResponse, r: AdminReply, headers: Record<string, string> = {}): void {
  sendBody(res, r, r.text ?? `${JSON.stringify(r.json ?? {}, null, 2)}\n`, headers);
}

function sendBody(res: ServerResponse, r: AdminReply, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(r.status, { ...headers, 'content-type': r.contentType ?? 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
