import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AdminReply, AdminRoute, RouteSink } from '../core/contracts/adminRoute.js';
import type { Logger } from '../core/telemetry/logger.js';

/** Largest request body accepted (bytes); larger ones get 413. */
export const MAX_BODY_BYTES = 1 << 20;

/** PEM certificate chain and key the admin listener serves HTTPS with, and the CA client certificates must be signed by (optional). */
export interface AdminTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa?: Buffer;
}

/**
 * The admin HTTP listener (docs/PRODUCT.md §7), loopback by default; HTTPS when given {@link AdminTls}
 * (a client CA makes a client certificate signed by it mandatory: the TLS handshake fails without). Mutating routes need
 * `Authorization: Bearer <token>`: 401 without or with a wrong token, 403 when no token is
 * configured (mutation disabled). Bad JSON gets 400, unknown paths 404, wrong methods 405; a
 * failing handler gets 500 and a log line, and the listener keeps serving.
 */
export class AdminServer implements RouteSink {
  private readonly routes = new Map<string, AdminRoute>();
  private server: Server | undefined;
  port = 0;

  constructor(
    private token: string | undefined,
    private readonly log: Logger,
    private readonly tls?: AdminTls,
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

  /**
   * Starts listening; port 0 picks a free port (read it from {@link port}).
   * @throws Error when the address cannot be bound.
   */
  async start(address: string, port: number): Promise<void> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.serve(req, res).catch((e: unknown) => {
        this.log.error({ err: e }, 'admin request failed');
        if (!res.headersSent) send(res, { status: 500, json: { error: 'internal error' } });
      });
    };
    const tls = this.tls;
    const server: Server = tls
      ? createTlsServer(
          { cert: tls.cert, key: tls.key, ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}), minVersion: 'TLSv1.2' },
          handler,
        )
      : createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const a = server.address();
    this.port = typeof a === 'object' && a ? a.port : port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://admin.invalid');
    const route = this.routes.get(`${req.method} ${url.pathname}`);
    if (!route) {
      const known = [...this.routes.values()].some((r) => r.path === url.pathname);
      send(res, known ? { status: 405, json: { error: `method ${req.method} not allowed` } } : { status: 404, json: { error: 'not found' } });
      req.resume();
      return;
    }
    if (route.mutating) {
      const denied = this.authorise(req);
      if (denied) {
        req.resume();
        send(res, denied);
        return;
      }
    }
    const body = await readBody(req);
    send(res, body.ok ? await route.handle({ url, body: body.value, headers: req.headers }) : body.reply);
  }

  private authorise(req: IncomingMessage): AdminReply | undefined {
    if (this.token === undefined) return { status: 403, json: { error: 'no admin token configured: mutating endpoints are disabled' } };
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    const want = Buffer.from(this.token);
    if (given.length !== want.length || !timingSafeEqual(given, want)) return { status: 401, json: { error: 'missing or wrong admin token' } };
    return undefined;
  }
}

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

function send(res: ServerResponse, r: AdminReply): void {
  const body = r.text ?? `${JSON.stringify(r.json ?? {}, null, 2)}\n`;
  res.writeHead(r.status, { 'content-type': r.contentType ?? 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
