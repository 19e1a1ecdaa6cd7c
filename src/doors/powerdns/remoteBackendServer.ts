import type { Server, Socket } from 'node:net';
import type { FrontDoor, HandedConnection, ListeningSocket } from '../../core/contracts/frontDoor.js';
import type { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import type { Logger } from '../../core/telemetry/logger.js';
import { RateLimitedLog } from '../../core/telemetry/rateLimitedLog.js';
import { AnswerWrapper } from '../answerWrapper.js';
import type { DoorEngine } from '../doorHost.js';
import type { PowerdnsListenerConfig } from './listenerSchema.js';
import { PowerDnsMetrics } from './metrics.js';
import type { ZoneSigningKeys } from '../../core/contracts/zoneSigningKeys.js';
import { errorReply, RemoteBackendSession, type RemoteBackendDeps, type Reply } from './remoteBackend.js';
import { handOverConnections, type HandoverCandidate } from '../connectionHandover.js';
import { longestWaiting, StreamConnection } from '../streamConnection.js';
import { closeUnixSocket, listenUnixSocket, releaseUnixSocket, takenOverUnixSocket, unixListening } from '../unixSocket.js';
import { RequestLines } from './requestLines.js';
import { RemoteBackendHttp } from './remoteBackendHttp.js';

/**
 * The PowerDNS front door of an engine (not yet listening: call `start()`), with its metrics on
 * the engine's registry. `path` is the absolute socket path.
 */
export function powerDnsFrontDoor(
  engine: DoorEngine,
  metrics: EngineMetrics,
  log: Logger,
  config: PowerdnsListenerConfig,
  path: string,
  zoneKeys?: ZoneSigningKeys,
): RemoteBackendServer {
  const ctx = engine.ctx;
  const lookOnlyCtx = { random: () => ctx.random(), now: () => ctx.now(), rotation: ctx.rotation.readOnlyView() };
  const answers = new AnswerWrapper({ engine, metrics, log });
  const deps: RemoteBackendDeps = {
    engine,
    metrics: new PowerDnsMetrics(metrics.registry),
    answers,
    log,
    warnings: new RateLimitedLog(log),
    lookOnlyCtx,
    ...(zoneKeys ? { zoneKeys } : {}),
  };
  return new RemoteBackendServer(deps, config, path);
}

/** Warnings about rejected or timed-out connections are logged at most this often (ms), each kind. */
const REJECT_WARNING_INTERVAL_MS = 60000;

/**
 * The PowerDNS remote backend front door: a Unix socket server (docs/PRODUCT.md §1) that pdns_server
 * connects to (`remote-connection-string=unix:path=...`). Each connection gets its own
 * {@link RemoteBackendSession}; requests are newline-delimited JSON, answered in order, one reply
 * document per request. PowerDNS keeps one request outstanding per connection and gets its
 * concurrency from many connections (receiver-threads × distributor-threads, +1 for TCP).
 *
 * Bad input closes only the offending connection: malformed JSON, an unknown method, a line over
 * `maxRequestBytes` (after its error reply, even while the peer keeps sending). A connection that
 * sends no complete request within `requestTimeoutMs` of connecting, or leaves a request line
 * incomplete that long, is closed (a stuck or hostile peer must not hold one of the
 * `maxConnections` places). Connections beyond `maxConnections` are closed at once. An idle
 * connection between requests is kept: PowerDNS keeps its connections for its lifetime, and a
 * connection it finds closed costs a SERVFAIL. Replies wait for the peer to read them with one
 * `drain` listener (shared {@link StreamConnection}).
 */
export class RemoteBackendServer implements FrontDoor {
  private server: Server | undefined;
  private readonly connections = new Map<Socket, StreamConnection>();
  /** What a hand-over needs of each connection (`../connectionHandover.ts`). */
  private readonly handover = new Map<Socket, HandoverCandidate>();
  /** Open connections per `instance` name, behind the connections gauge. */
  private readonly perInstance = new Map<string, number>();
  private lastRejectWarningMs = -Infinity;
  private lastTimeoutWarningMs = -Infinity;
  /** The HTTP listener (`listeners.powerdns.http`), when configured. */
  private readonly http: RemoteBackendHttp | undefined;

  constructor(
    private readonly deps: RemoteBackendDeps,
    private readonly config: PowerdnsListenerConfig,
    /** Absolute socket path (the configured path resolved against the configuration file). */
    readonly path: string,
  ) {
    this.http = config.http ? new RemoteBackendHttp(deps, config, config.http) : undefined;
  }

  /**
   * Creates the socket. A stale socket file left by a process that is gone is replaced; a socket
   * another process still listens on, or a file that is not a socket, is an error.
   * @throws Error when the path is too long, in use, not a socket, or cannot be bound.
   */
  async start(inherited: ReadonlyMap<string, ListeningSocket> = new Map()): Promise<void> {
    const server = await listenUnixSocket('PowerDNS', this.path, this.config.mode, (conn) => this.accept(conn), takenOverUnixSocket(inherited, this.path));
    server.on('error', (e) => this.deps.log.error({ err: e }, 'PowerDNS socket error'));
    this.server = server;
    try {
      await this.http?.start(inherited);
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  /** The listening sockets (Unix, and HTTP when configured), for a replacement process. */
  listening(): ReadonlyMap<string, ListeningSocket> {
    return new Map([...unixListening(this.path, this.server), ...(this.http?.listening() ?? [])]);
  }

  /** The HTTP listener's `address:port`, when configured and listening. */
  httpAddress(): string | undefined {
    return this.http?.bound();
  }

  /**
   * Hand-over to a replacement process: stops accepting (the socket file and the socket stay the
   * replacement's), stops reading each PowerDNS connection and passes it, with its `instance` and
   * the bytes of a request line read only in part, once the replies to the lines it read are out:
   * PowerDNS keeps its connections and sees no close, so no query fails (a closed connection costs
   * one SERVFAIL, Failure behaviour).
   */
  async handOver(pass: (connection: HandedConnection) => void): Promise<number> {
    const server = this.server;
    this.server = undefined;
    if (server) releaseUnixSocket(server);
    const [http, unix] = await Promise.all([this.http?.handOver(pass), handOverConnections(() => this.handover.values(), pass)]);
    return (http ?? 0) + unix;
  }

  /** Serves a PowerDNS connection the replaced process passed, already initialized: a Unix one, or the HTTP listener's (`transport: 'http'`). */
  adopt(connection: HandedConnection): void {
    const raw = connection.state.instance;
    const instance = typeof raw === 'string' ? raw : undefined;
    if (connection.state.transport === 'http') {
      if (this.http) this.http.adopt(connection.socket, instance);
      else connection.socket.destroy();
    } else this.accept(connection.socket, instance);
  }

  /** `powerdns`: the socket path; `powerdnsHttp`: the HTTP listener's address, when configured. */
  describe(): Record<string, unknown> {
    const http = this.http?.bound();
    return { powerdns: this.path, ...(http ? { powerdnsHttp: http } : {}) };
  }

  /** Closes the socket and every connection, and removes the socket file (not one systemd passed: `closeUnixSocket`). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const c of this.connections.keys()) c.destroy();
    await Promise.all([closeUnixSocket(server, this.path), this.http?.stop()]);
  }

  private accept(conn: Socket, instance?: string): void {
    const { metrics, log } = this.deps;
    if (this.connections.size >= this.config.maxConnections && !this.evictWaiting()) {
      metrics.connectionsTotal.inc({ result: 'rejected' });
      conn.destroy();
      const now = Date.now();
      if (now - this.lastRejectWarningMs >= REJECT_WARNING_INTERVAL_MS) {
        this.lastRejectWarningMs = now;
        log.warn({ maxConnections: this.config.maxConnections }, 'PowerDNS connection rejected: maxConnections are open');
      }
      return;
    }
    metrics.connectionsTotal.inc({ result: 'accepted' });
    const session = new RemoteBackendSession(this.deps);
    if (instance !== undefined) session.instance = instance;
    const lines = new RequestLines(this.config.maxRequestBytes);
    let counted: string | undefined;
    let closing = false;
    // Lines read while a reply is pending (a lookup waiting for a sub-tier): answered in order once
    // it settles. PowerDNS sends one request at a time, so this holds at most a stray line or two.
    let held: string[] | undefined;
    const setInstance = (): void => {
      const instance = (session.instance ?? '').slice(0, 64);
      if (counted === instance) return;
      if (counted !== undefined) this.leave(counted);
      this.join(instance);
      counted = instance;
    };
    setInstance();

    // Deadline: armed from connecting until the first complete request (pdns sends `initialize`
    // at once) and while a request line is incomplete; an idle connection between requests is
    // normal for pdns (it keeps its connections for its lifetime) and has none.
    const stream = new StreamConnection(conn, this.config.requestTimeoutMs, undefined, () => {
      closing = true;
      metrics.protocolErrors.inc({ reason: 'request_timeout' });
      const now = Date.now();
      if (now - this.lastTimeoutWarningMs >= REJECT_WARNING_INTERVAL_MS) {
        this.lastTimeoutWarningMs = now;
        log.warn(
          { instance: session.instance, requestTimeoutMs: this.config.requestTimeoutMs },
          'PowerDNS connection sent no complete request in time; closed',
        );
      }
    });
    // A connection passed by a replaced process is between two requests (idle, no deadline) unless
    // it came with part of a request line, which the first `data` event completes or re-arms.
    if (instance === undefined) stream.arm();
    this.connections.set(conn, stream);
    this.handover.set(conn, {
      socket: conn,
      settled: () => !closing && held === undefined,
      received: () => lines.partial(),
      state: (): HandedConnection['state'] => (session.instance === undefined ? {} : { instance: session.instance }),
      forget: () => {
        stream.disarm();
        this.connections.delete(conn);
        this.handover.delete(conn);
        if (counted !== undefined) this.leave(counted);
        counted = undefined;
        closing = true;
      },
    });
    /** Writes one reply; false when it closes the connection. */
    const send = (reply: Reply): boolean => {
      if (reply.close) {
        closing = true;
        conn.end(reply.text);
        return false;
      }
      setInstance();
      stream.send(reply.text);
      return true;
    };
    /** Answers `batch` from `from` on, in order; stops at a reply that is a promise and goes on when it settles. */
    const serve = (batch: readonly string[], from: number): void => {
      for (let i = from; i < batch.length; i++) {
        const line = batch[i]!;
        if (line.trim() === '') continue;
        const reply = session.handle(line);
        if (reply instanceof Promise) {
          held = batch.slice(i + 1);
          void reply.then((r) => {
            const rest = held!;
            held = undefined;
            if (!closing && !conn.destroyed && send(r)) serve(rest, 0);
          });
          return;
        }
        if (!send(reply)) return;
      }
    };
    conn.on('data', (chunk: Buffer) => {
      if (closing) return;
      const complete = lines.push(chunk);
      if (complete === 'oversized') {
        closing = true;
        stream.disarm();
        metrics.protocolErrors.inc({ reason: 'oversized' });
        this.deps.warnings.warn(
          'oversized',
          { instance: session.instance, maxRequestBytes: this.config.maxRequestBytes },
          'PowerDNS request line too long; closing the connection',
        );
        // Closed once the error reply is out, whatever the peer keeps sending.
        conn.end(errorReply(`request longer than ${this.config.maxRequestBytes} bytes`), () => conn.destroy());
        return;
      }
      if (complete.length === 0) {
        if (!stream.armed) stream.arm();
      } else if (lines.partialBytes > 0) stream.arm();
      else stream.disarm();
      if (held !== undefined) {
        for (const line of complete) held.push(line);
        return;
      }
      serve(complete, 0);
    });
    conn.on('error', () => conn.destroy());
    conn.on('close', () => {
      this.connections.delete(conn);
      this.handover.delete(conn);
      if (counted !== undefined) this.leave(counted);
      if (!closing && lines.partialBytes > 0) {
        metrics.protocolErrors.inc({ reason: 'disconnect_mid_request' });
        log.debug({ instance: session.instance, bytes: lines.partialBytes }, 'PowerDNS connection closed in the middle of a request');
      }
    });
  }

  /**
   * At the cap, closes the connection that has waited longest for a request to complete, if that
   * is at least half `requestTimeoutMs` (RFC 7766 §6.2.3 applied here: under pressure, stuck
   * connections go sooner). Connections idle between requests are pdns's own and are never chosen.
   */
  private evictWaiting(): boolean {
    const stuck = longestWaiting(this.connections.values(), this.config.requestTimeoutMs / 2);
    if (!stuck) return false;
    this.deps.metrics.protocolErrors.inc({ reason: 'request_timeout' });
    this.connections.delete(stuck.socket);
    stuck.socket.destroy();
    return true;
  }

  private join(instance: string): void {
    const open = (this.perInstance.get(instance) ?? 0) + 1;
    this.perInstance.set(instance, open);
    this.deps.metrics.connections.set({ instance }, open);
  }

  /** Lowers an instance's connection gauge and drops its label at zero, so labels stay bounded. */
  private leave(instance: string): void {
    const open = (this.perInstance.get(instance) ?? 1) - 1;
    if (open > 0) {
      this.perInstance.set(instance, open);
      this.deps.metrics.connections.set({ instance }, open);
    } else {
      this.perInstance.delete(instance);
      this.deps.metrics.connections.remove({ instance });
    }
  }
}
