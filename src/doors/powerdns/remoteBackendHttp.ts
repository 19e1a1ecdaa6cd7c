import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { isIPv6, Server, type Socket } from 'node:net';
import type { HandedConnection, ListeningSocket } from '../../core/contracts/frontDoor.js';
import { handOverConnections, type HandoverCandidate } from '../connectionHandover.js';
import { listenTcpServer } from '../takenOverServer.js';
import { activatedTcpSocket } from './activatedTcpSocket.js';
import type { PowerdnsListenerConfig } from './listenerSchema.js';
import { RemoteBackendSession, type RemoteBackendDeps, type Reply } from './remoteBackend.js';

/**
 * The remote backend over HTTP, for PowerDNS's HTTP connector with `post=1,post_json=1`
 * (PowerDNS 4.7 `httpconnector.cc`): each request is a POST whose body is the same JSON document
 * the Unix connector writes as a line, and the reply body is the same reply document, so one
 * {@link RemoteBackendSession} per TCP connection answers exactly as on the Unix socket (pairing
 * and repeated lines included). What it is for: before each request, PowerDNS's HTTP connector
 * polls its kept-alive connection and, when it is readable (the engine that held it is gone) or
 * the write fails, connects again and sends the request there, so an engine restart costs no
 * SERVFAIL (the Unix connector writes into the dead connection and fails the query). That poll
 * waits up to 1 ms on a live connection, which bounds each PowerDNS connection to about 1,000
 * requests a second (README, "Engine outages").
 *
 * Its listening socket is the one systemd passed (socket activation, {@link activatedTcpSocket}),
 * the one a replaced process handed over (`tcp|powerdns|ADDRESS|PORT`), or bound here.
 */
export class RemoteBackendHttp {
  private server: HttpServer | undefined;
  private readonly sessions = new WeakMap<Socket, RemoteBackendSession>();
  /** Open connections, for a hand-over to a replacement process. */
  private readonly handover = new Map<Socket, HandoverCandidate>();
  /** Connections with a request read and not yet answered. */
  private readonly busy = new Set<Socket>();
  /** Connections a replaced process passed (already counted there). */
  private readonly adopted = new WeakSet<Socket>();

  constructor(
    private readonly deps: RemoteBackendDeps,
    private readonly config: PowerdnsListenerConfig,
    private readonly http: NonNullable<PowerdnsListenerConfig['http']>,
  ) {}

  /** The hand-over key of its listening socket. */
  get key(): string {
    return `tcp|powerdns|${this.http.address}|${this.http.port}`;
  }

  /**
   * Listens (see the class comment for which socket).
   * @throws Error when the address cannot be bound.
   */
  async start(inherited: ReadonlyMap<string, ListeningSocket>): Promise<void> {
    const server = createServer(
      { keepAliveTimeout: 0, requestTimeout: this.config.requestTimeoutMs, headersTimeout: this.config.requestTimeoutMs },
      (req, res) => this.request(req, res),
    );
    // PowerDNS keeps each connection for its lifetime; an idle one is normal and costs nothing.
    server.keepAliveTimeout = 0;
    server.maxConnections = this.config.maxConnections;
    server.on('connection', (socket: Socket) => {
      if (!this.adopted.has(socket)) this.deps.metrics.connectionsTotal.inc({ result: 'accepted' });
      socket.setNoDelay(true);
      this.handover.set(socket, {
        socket,
        settled: () => !this.busy.has(socket),
        // Node's HTTP parser keeps a part-read request to itself, so none is passed. PowerDNS's
        // connector sends one request at a time and waits for its answer: a connection it is not
        // waiting on holds none, unless its next request's first bytes came in this very poll.
        received: () => Buffer.alloc(0),
        state: (): HandedConnection['state'] => {
          const instance = this.sessions.get(socket)?.instance;
          return { transport: 'http', ...(instance === undefined ? {} : { instance }) };
        },
        forget: () => {
          this.handover.delete(socket);
          this.busy.delete(socket);
        },
      });
      socket.on('close', () => {
        this.handover.delete(socket);
        this.busy.delete(socket);
      });
    });
    server.on('drop', () => this.deps.metrics.connectionsTotal.inc({ result: 'rejected' }));
    server.on('clientError', (_e, socket: Socket) => socket.destroy());
    const old = inherited.get(this.key);
    const fd = activatedTcpSocket(this.http.port);
    await listenTcpServer(
      server,
      old && !('send' in old) ? old : undefined,
      fd !== undefined ? { fd } : { host: this.http.address, port: this.http.port, ipv6Only: isIPv6(this.http.address) },
    );
    server.on('error', (e) => this.deps.log.error({ err: e }, 'PowerDNS HTTP listener error'));
    this.server = server;
  }

  /** `address:port` it listens on (the bound port when configured 0). */
  bound(): string | undefined {
    const a = this.server?.address();
    return typeof a === 'object' && a ? `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}` : undefined;
  }

  /** Its listening socket, for a replacement process. */
  listening(): ReadonlyMap<string, ListeningSocket> {
    return new Map<string, Server>(this.server ? [[this.key, this.server]] : []);
  }

  /**
   * Hand-over to a replacement process (`gslbd ctl replace`): stops accepting (the listening
   * socket is the replacement's now) and passes each connection to `pass` between two requests, so
   * PowerDNS keeps its kept-alive connections and sees no close. Closing them instead (as
   * {@link stop} does) raced PowerDNS's HTTP connector: a request written into a connection the
   * old process was closing came back SERVFAIL (5 in a replace under dnsperf,
   * test/e2e/replace.timing.test.ts).
   */
  async handOver(pass: (connection: HandedConnection) => void): Promise<number> {
    const server = this.server;
    if (!server) return 0;
    this.server = undefined;
    // net.Server's close, not http.Server's: that one also closes the idle connections, which are
    // the ones to pass.
    Server.prototype.close.call(server);
    // Nothing closed after: a passed connection may still wait in the IPC channel's queue (one
    // handle in flight at a time) with its descriptor open here; closing it would reset it.
    return handOverConnections(() => this.handover.values(), pass);
  }

  /** Serves a connection a replaced process passed between two requests, with its PowerDNS `instance`. */
  adopt(socket: Socket, instance: string | undefined): void {
    if (!this.server) {
      socket.destroy();
      return;
    }
    const session = new RemoteBackendSession(this.deps);
    if (instance !== undefined) session.instance = instance;
    this.sessions.set(socket, session);
    this.adopted.add(socket);
    this.server.emit('connection', socket);
  }

  /** Stops accepting and closes its connections at once; PowerDNS's HTTP connector connects again before its next request. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  }

  private request(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-length': 0 }).end();
      return;
    }
    // Busy from the request until its answer is written: a hand-over passes the connection only then.
    const socket = req.socket;
    this.busy.add(socket);
    res.on('close', () => this.busy.delete(socket));
    const chunks: Buffer[] = [];
    let size = 0;
    let oversized = false;
    req.on('data', (chunk: Buffer) => {
      if (oversized) return;
      size += chunk.length;
      if (size > this.config.maxRequestBytes) {
        oversized = true;
        this.deps.metrics.protocolErrors.inc({ reason: 'oversized' });
        res.writeHead(413, { connection: 'close', 'content-length': 0 }).end(() => req.socket.destroy());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (oversized) return;
      const socket = req.socket;
      let session = this.sessions.get(socket);
      if (!session) {
        session = new RemoteBackendSession(this.deps);
        this.sessions.set(socket, session);
      }
      const reply = session.handle(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
      // A lookup that waits for a sub-tier (recursive delegation) is answered when it settles; PowerDNS's connector waits for it.
      if (reply instanceof Promise) void reply.then((r) => respond(res, r));
      else respond(res, reply);
    });
  }
}

/** Writes one reply document as the response, closing the connection when the session says so; nothing once the client has gone. */
function respond(res: ServerResponse, reply: Reply): void {
  if (res.destroyed) return;
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(reply.text),
    ...(reply.close ? { connection: 'close' } : {}),
  });
  res.end(reply.text);
}
