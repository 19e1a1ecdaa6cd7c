import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { Server as NetServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { AdminRoute } from '../../core/contracts/adminRoute.js';
import type { FrontDoor, ListeningSocket } from '../../core/contracts/frontDoor.js';
import { formatIp, maskAddress, parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import type { Answer, Query } from '../../core/model/query.js';
import { AnswerWrapper } from '../answerWrapper.js';
import { listenTcpServer } from '../takenOverServer.js';
import type { DoorHost } from '../doorHost.js';
import { ClientAddresses } from './clientAddress.js';
import type { RedirectHostConfig, RedirectListenerConfig } from './listenerSchema.js';
import { decideRedirect, redirectQuery, type RedirectDecision } from './redirectDecision.js';
import { redirectExplainRoute } from './redirectExplain.js';
import { RedirectMetrics } from './redirectMetrics.js';
import { requestTarget } from './requestTarget.js';

/** The certificate chain and private key of an HTTPS redirect listener (PEM). */
export interface RedirectTls {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Longest interval (ms) between Node's checks of request and header timeouts (its default, 30 s, would let a slow request live 30 s past its timeout). */
const TIMEOUT_CHECK_MS = 1000;

/**
 * The HTTP redirect front door (docs/PRODUCT.md §6, seed 003): an HTTP or HTTPS listener that
 * answers each request for a configured host with a redirect to the base URL of the data center
 * the host's GSLB record chooses for the client — the real address of the TCP connection, or the
 * client a trusted proxy forwards for — keeping the path and query. It asks the engine as the DNS
 * doors do (`host.engine.resolve`, one engine call per request), without meta-QTYPEs, rcodes or
 * SERVFAIL: a failure is a 503.
 *
 * Replies: the configured redirect status with `Location` and `Cache-Control: private,
 * max-age=<the record's TTL>` (`private`: the redirect depends on the client's address, so no
 * shared cache may keep it for others); 421 for a host it does not redirect (RFC 9110 §15.5.20);
 * 400 for a request whose host or target is malformed or that names no path; 503 with
 * `Retry-After` when the record answers no data center with a URL (its fail-safe list, NODATA) or
 * the engine fails. Limits: `maxConnections` (more are closed at once and counted),
 * `maxRequestsPerConnection`, `requestTimeoutMs` (whole request, TLS handshake), `idleTimeoutMs`
 * (keep-alive), `maxHeaderBytes` (431). A request with a body is answered and its connection
 * closed, so the body is never read.
 */
export class RedirectServer implements FrontDoor {
  /** `GET /explain/redirect` on the admin listener. */
  readonly routes: readonly AdminRoute[];
  /** The bound port (after {@link start}). */
  port = 0;
  private server: HttpServer | HttpsServer | undefined;
  private readonly hosts: ReadonlyMap<string, RedirectHostConfig>;
  private readonly clients: ClientAddresses;
  private readonly answers: AnswerWrapper;
  private readonly metrics: RedirectMetrics;
  /** Set by {@link handOver}: every reply closes its connection. */
  private handingOver = false;
  /** Requests answered per connection, for `maxRequestsPerConnection`. */
  private readonly requests = new WeakMap<Socket, number>();

  constructor(
    private readonly cfg: RedirectListenerConfig,
    private readonly host: DoorHost,
    private readonly tls: RedirectTls | undefined,
  ) {
    this.hosts = new Map(cfg.hosts.map((h) => [h.host, h]));
    this.clients = new ClientAddresses(cfg.trustedProxies);
    this.answers = new AnswerWrapper(host, { component: 'redirect' });
    this.metrics = new RedirectMetrics(host.metrics.registry);
    this.routes = [redirectExplainRoute(this.hosts, host.engine, cfg.status)];
  }

  /**
   * Listens on `address:port` (port 0 picks a free one: read {@link port}).
   * @throws Error when the address cannot be bound, or the TLS certificate and key do not load.
   */
  async start(inherited: ReadonlyMap<string, ListeningSocket> = new Map()): Promise<void> {
    const cfg = this.cfg;
    const old = inherited.get(this.key);
    const options = {
      maxHeaderSize: cfg.maxHeaderBytes,
      requestTimeout: cfg.requestTimeoutMs,
      headersTimeout: cfg.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, cfg.requestTimeoutMs),
      // Counted and answered here, with the other malformed requests.
      requireHostHeader: false,
    };
    const handle = (req: IncomingMessage, res: ServerResponse): void => this.handle(req, res);
    const server = this.tls
      ? createHttpsServer({ ...options, cert: this.tls.cert, key: this.tls.key, handshakeTimeout: cfg.requestTimeoutMs }, handle)
      : createHttpServer(options, handle);
    server.maxConnections = cfg.maxConnections;
    // Not `maxRequestsPerSocket`: Node then only announces `Connection: close` and keeps the
    // connection open until the idle timeout (answering later requests 503); see `handle`.
    server.keepAliveTimeout = cfg.idleTimeoutMs;
    server.on('drop', () => this.metrics.dropped.inc());
    this.port = await listenTcpServer(server, old && !('send' in old) ? old : undefined, { port: cfg.port ?? (this.tls ? 443 : 80), host: cfg.address });
    this.server = server;
  }

  /** The hand-over key of the listener: `http|ADDRESS|CONFIGURED_PORT`. */
  private get key(): string {
    return `http|${this.cfg.address}|${this.cfg.port ?? ''}`;
  }

  /** The listening socket, for a replacement process. */
  listening(): ReadonlyMap<string, ListeningSocket> {
    return new Map(this.server ? [[this.key, this.server]] : []);
  }

  /**
   * Hand-over to a replacement process listening on the same socket: stops accepting, answers the
   * requests still arriving on kept-alive connections with `Connection: close` (the client then
   * opens its next connection to the replacement), and leaves idle connections to the idle
   * timeout, which clients know from the `Keep-Alive` header; resolves when the last connection
   * closed. Closing idle kept-alive connections at once instead lost requests: a client that sent
   * its next request as the connection closed read ECONNRESET
   * (`test/e2e/replaceDoors.timing.test.ts`).
   */
  async handOver(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    this.handingOver = true;
    // net.Server's close, not http.Server's: since Node 19 that one also closes the idle connections at once.
    await new Promise<void>((r) => NetServer.prototype.close.call(s, () => r()));
  }

  /** Closes the listener and every connection. */
  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** `redirect`: the listener's URL (`http://127.0.0.1:8080`, `https://[::1]:8443`). */
  describe(): Record<string, unknown> {
    const address = this.cfg.address.includes(':') ? `[${this.cfg.address}]` : this.cfg.address;
    return { redirect: `${this.tls ? 'https' : 'http'}://${address}:${this.port}` };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const served = (this.requests.get(req.socket) ?? 0) + 1;
    this.requests.set(req.socket, served);
    // The last request a connection may make, one with a body (a redirect needs none: rather
    // than read it, answer and close), or any once the listener is handed over: the reply closes the connection.
    if (
      this.handingOver ||
      served >= this.cfg.maxRequestsPerConnection ||
      (req.headers['content-length'] !== undefined ? req.headers['content-length'] !== '0' : req.headers['transfer-encoding'] !== undefined)
    ) {
      res.shouldKeepAlive = false;
    }
    const target = requestTarget(req.url ?? '', req.headersDistinct.host);
    if (!target.ok) return this.refuse(res, 400, '', target.reason, 0);
    const site = this.hosts.get(target.host);
    if (site === undefined) return this.refuse(res, 421, '', 'this server does not redirect that host', 0);
    const remote = req.socket.remoteAddress;
    if (remote === undefined) {
      // The connection closed while the request was read: nobody to answer.
      res.destroy();
      return;
    }
    const peer = parseIp(remote);
    const forwarded = req.headers['x-forwarded-for'];
    const client = this.clients.clientOf(peer, Array.isArray(forwarded) ? forwarded.join(', ') : forwarded);
    const query = redirectQuery(this.host.engine.snapshot, site, client);
    const started = this.answers.startTiming();
    let answer: Answer | Promise<Answer>;
    try {
      answer = this.host.engine.resolve(query);
    } catch (e) {
      return this.failed(res, site, query, e);
    }
    if (answer instanceof Promise) {
      void answer.then(
        (a) => this.reply(res, site, a, target.path, started, peer, client),
        (e: unknown) => this.failed(res, site, query, e),
      );
      return;
    }
    this.reply(res, site, answer, target.path, started, peer, client);
  }

  private reply(res: ServerResponse, site: RedirectHostConfig, answer: Answer, path: string, started: number, peer: IpAddress, client: IpAddress): void {
    if (started >= 0) this.host.metrics.resolveTimes.observe((performance.now() - started) / 1000);
    const d = decideRedirect(site, answer, path, this.cfg.status);
    const rate = this.cfg.logSampleRate;
    if (rate > 0 && this.host.engine.ctx.random() < rate) this.logRequest(site, d, peer, client);
    if (d.location === undefined) return this.refuse(res, d.status, site.host, d.reason, d.maxAge);
    this.answers.countDcs([d.dc]);
    this.metrics.requests.inc({ host: site.host, dc: d.dc, status: d.status });
    res.writeHead(d.status, { location: d.location, 'cache-control': `private, max-age=${d.maxAge}`, 'content-length': 0 });
    res.end();
  }

  private failed(res: ServerResponse, site: RedirectHostConfig, query: Query, err: unknown): void {
    this.answers.logFailure(err, { host: site.host, record: query.name, type: query.type }, 'resolve failed; answering 503');
    this.refuse(res, 503, site.host, 'internal error', 0);
  }

  /** A reply without a redirect: the status, the reason as text, never cached; `Retry-After` (s) on a 503. */
  private refuse(res: ServerResponse, status: number, host: string, reason: string, retryAfter: number): void {
    this.metrics.requests.inc({ host, dc: '', status });
    const body = `${reason}\n`;
    const headers: Record<string, string | number> = {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    };
    if (status === 503) headers['retry-after'] = Math.max(retryAfter, 1);
    if (status === 400) res.shouldKeepAlive = false;
    res.writeHead(status, headers);
    res.end(body);
  }

  /** One sampled request (`logSampleRate`), addresses truncated to /24 and /48; the path is not logged. */
  private logRequest(site: RedirectHostConfig, d: RedirectDecision, peer: IpAddress, client: IpAddress): void {
    const truncate = (ip: IpAddress): string => `${formatIp(maskAddress(ip, ip.family === 4 ? 24 : 48))}/${ip.family === 4 ? 24 : 48}`;
    this.host.log.info(
      { component: 'redirect-log', host: site.host, client: truncate(client), peer: truncate(peer), status: d.status, dc: d.dc, maxAge: d.maxAge },
      'redirect',
    );
  }
}
