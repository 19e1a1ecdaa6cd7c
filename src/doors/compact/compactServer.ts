import type { Server, Socket } from 'node:net';
import { Counter, Gauge } from 'prom-client';
import type { FrontDoor, HandedConnection, ListeningSocket } from '../../core/contracts/frontDoor.js';
import type { CompactListenerConfig } from './listenerSchema.js';
import { compactAnswerer, type CompactAnswerDeps, type CompactAnswerer } from './compactAnswer.js';
import {
  EngineState,
  ErrorCode,
  type AnswerFrame,
  FrameKind,
  PROTOCOL_VERSION,
  decodeHello,
  decodeQuery,
  encodeError,
  encodeHelloAck,
  encodePong,
  readHeader,
} from './frameCodec.js';
import { handOverConnections, type HandoverCandidate } from '../connectionHandover.js';
import { longestWaiting, StreamConnection } from '../streamConnection.js';
import { closeUnixSocket, listenUnixSocket, releaseUnixSocket, takenOverUnixSocket, unixListening } from '../unixSocket.js';
import { FrameReader, FramingError } from './frameReader.js';
import { ReplyBatch } from './replyBatch.js';

/** Queries a shim should keep in flight per connection (advertised in HELLO_ACK). */
const MAX_INFLIGHT = 1024;
/** Our name in HELLO_ACK. */
const ENGINE_NAME = 'gslbd';

/**
 * The compact-protocol listener (docs/protocol.md) on a Unix socket, for the CoreDNS plugin and
 * other shims. Each connection is read frame by frame and every QUERY answered synchronously
 * from the engine's current snapshot. The replies to a received chunk are gathered into one
 * buffer ({@link ReplyBatch}), so a burst of queries costs one write. When the peer does not
 * read its replies (the send buffer is full) reading pauses until they drain. A broken length
 * field, a frame over `maxFrameBytes`, a missing HELLO, a version mismatch or no complete frame
 * for `idleTimeoutMs` (partial bytes do not count) closes that connection only; a malformed body
 * or an unknown kind gets an ERROR frame and the connection stays open. An answer the engine
 * gives asynchronously is written when it settles, after the answers to later queries (the
 * shim matches answers by id).
 */
export class CompactServer implements FrontDoor {
  private server: Server | undefined;
  private readonly connections = new Map<Socket, StreamConnection>();
  /** What a hand-over needs of each connection (`../connectionHandover.ts`). */
  private readonly handover = new Map<Socket, HandoverCandidate>();
  private stopping = false;
  private readonly connectionsGauge: Gauge;
  private readonly protocolErrors: Counter<'reason'>;
  private readonly answer: CompactAnswerer;

  /**
   * @param path the socket path, already resolved against the configuration file's folder.
   */
  constructor(
    private readonly deps: CompactAnswerDeps,
    private readonly config: CompactListenerConfig,
    readonly path: string,
  ) {
    this.answer = compactAnswerer(deps);
    const registry = deps.metrics.registry;
    this.connectionsGauge =
      (registry.getSingleMetric('gslbd_compact_connections') as Gauge | undefined) ??
      new Gauge({ name: 'gslbd_compact_connections', help: 'Open compact-protocol connections', registers: [registry] });
    this.protocolErrors =
      (registry.getSingleMetric('gslbd_compact_protocol_errors_total') as Counter<'reason'> | undefined) ??
      new Counter({
        name: 'gslbd_compact_protocol_errors_total',
        help: 'Compact-protocol frames answered with ERROR or connections closed for bad framing, by reason',
        labelNames: ['reason'] as const,
        registers: [registry],
      });
  }

  /**
   * Listens on the socket. A socket file left by a previous run is replaced, but only after a
   * connection attempt to it fails (so a running engine's socket is never taken over).
   * @throws Error when the path is too long, exists and is not a socket, is in use, or cannot be bound.
   */
  async start(inherited: ReadonlyMap<string, ListeningSocket> = new Map()): Promise<void> {
    const server = await listenUnixSocket('compact', this.path, this.config.mode, (conn) => this.accept(conn), takenOverUnixSocket(inherited, this.path));
    server.on('error', (e) => this.deps.log.error({ err: e, component: 'compact' }, 'compact listener error'));
    this.server = server;
  }

  /** The listening socket, for a replacement process. */
  listening(): ReadonlyMap<string, ListeningSocket> {
    return unixListening(this.path, this.server);
  }

  /**
   * Hand-over to a replacement process: stops accepting (the socket file and the socket stay the
   * replacement's), stops reading each connection and passes it, with its protocol version and
   * the bytes of a frame read only in part, once the answers to the frames it read are out, so
   * the shim keeps its connection and loses no query, also when it always has queries in flight.
   */
  async handOver(pass: (connection: HandedConnection) => void): Promise<number> {
    const server = this.server;
    this.server = undefined;
    if (server) releaseUnixSocket(server);
    return handOverConnections(() => this.handover.values(), pass);
  }

  /** Serves a connection the replaced process passed (HELLO exchanged unless its version is 0), its part-read frame first. */
  adopt(connection: HandedConnection): void {
    const version = connection.state.version;
    this.accept(connection.socket, typeof version === 'number' ? version : 0);
  }

  /** `compact`: the socket path. */
  describe(): Record<string, unknown> {
    return { compact: this.path };
  }

  /** Closes the listener and every connection, and removes the socket file (not one systemd passed: `closeUnixSocket`). */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const c of this.connections.keys()) c.destroy();
    const server = this.server;
    if (!server) return;
    await closeUnixSocket(server, this.path);
  }

  private accept(conn: Socket, version = 0): void {
    if (this.stopping || (this.connections.size >= this.config.maxConnections && !this.evictIdle())) {
      this.protocolErrors.inc({ reason: 'too-many-connections' });
      conn.destroy();
      return;
    }
    const stream = new StreamConnection(conn, this.config.idleTimeoutMs, undefined, () => this.protocolErrors.inc({ reason: 'idle-timeout' }));
    this.connections.set(conn, stream);
    this.connectionsGauge.set(this.connections.size);
    conn.on('close', () => {
      this.connections.delete(conn);
      this.handover.delete(conn);
      this.connectionsGauge.set(this.connections.size);
    });
    conn.on('error', () => conn.destroy());
    this.serve(stream, version);
  }

  /**
   * At the cap, closes the connection with no complete frame for the longest time, if that is at
   * least half `idleTimeoutMs` (RFC 7766 §6.2.3 applied here: under pressure, idle connections go
   * sooner; live shims PING every second and are never chosen).
   */
  private evictIdle(): boolean {
    const idle = longestWaiting(this.connections.values(), this.config.idleTimeoutMs / 2);
    if (!idle) return false;
    this.protocolErrors.inc({ reason: 'idle-timeout' });
    this.connections.delete(idle.socket);
    idle.socket.destroy();
    return true;
  }

  private serve(stream: StreamConnection, agreed: number): void {
    const conn = stream.socket;
    let version = agreed;
    let closing = false;
    let frames = 0;
    let answering = 0;
    stream.arm();
    const replies = new ReplyBatch((bytes) => stream.send(bytes));
    const send = (frame: Buffer): void => replies.frame(frame);
    const refuse = (id: number, code: number, reason: string, message: string): void => {
      this.protocolErrors.inc({ reason });
      closing = true;
      replies.flush();
      conn.end(encodeError(id, code, message));
      conn.destroySoon();
    };
    // Written in a batch of its own: the batches of received chunks are flushed before their callback returns.
    const answerLater = (id: number, answer: Promise<AnswerFrame>): void => {
      answering++;
      answer.then(
        (frame) => {
          answering--;
          if (closing || conn.destroyed) return;
          replies.answer(id, frame);
          replies.flush();
        },
        (e: unknown) => {
          answering--;
          this.deps.log.error({ err: e, component: 'compact' }, 'compact frame handling failed');
          this.protocolErrors.inc({ reason: 'internal' });
          conn.destroy();
        },
      );
    };
    this.handover.set(conn, {
      socket: conn,
      settled: () => !closing && answering === 0,
      received: () => reader.partial(),
      state: () => ({ version }),
      forget: () => {
        closing = true;
        stream.disarm();
        this.connections.delete(conn);
        this.handover.delete(conn);
        this.connectionsGauge.set(this.connections.size);
      },
    });
    const reader = new FrameReader(this.config.maxFrameBytes, (frame) => {
      if (closing) return;
      frames++;
      const h = readHeader(frame);
      if (version === 0) {
        if (h.kind !== FrameKind.HELLO) return refuse(h.id, ErrorCode.BAD_REQUEST, 'no-hello', 'the first frame must be HELLO');
        const hello = decodeHello(frame);
        if (typeof hello === 'string') return refuse(0, ErrorCode.BAD_REQUEST, 'bad-body', hello);
        if (hello.minVersion > PROTOCOL_VERSION || hello.maxVersion < PROTOCOL_VERSION) {
          return refuse(0, ErrorCode.UNSUPPORTED_VERSION, 'version', `this engine speaks version ${PROTOCOL_VERSION} only`);
        }
        version = PROTOCOL_VERSION;
        this.deps.log.info({ component: 'compact', peer: hello.name, maxInflight: hello.maxInflight }, 'compact client connected');
        return send(encodeHelloAck(version, this.state(), MAX_INFLIGHT, ENGINE_NAME));
      }
      if (h.version !== version) {
        return refuse(h.id, ErrorCode.UNSUPPORTED_VERSION, 'version', `frame version ${h.version}; this connection speaks ${version}`);
      }
      switch (h.kind) {
        case FrameKind.QUERY: {
          const q = decodeQuery(frame, h.flags);
          if (typeof q === 'string') {
            this.protocolErrors.inc({ reason: 'bad-body' });
            return send(encodeError(h.id, ErrorCode.BAD_REQUEST, q));
          }
          const answer = this.answer(q);
          if (answer instanceof Promise) return answerLater(h.id, answer);
          return replies.answer(h.id, answer);
        }
        case FrameKind.PING:
          return send(encodePong(h.id, this.state()));
        case FrameKind.HELLO:
          this.protocolErrors.inc({ reason: 'bad-body' });
          return send(encodeError(h.id, ErrorCode.BAD_REQUEST, 'HELLO was already received on this connection'));
        default:
          this.protocolErrors.inc({ reason: 'unknown-kind' });
          return send(encodeError(h.id, ErrorCode.UNKNOWN_KIND, `unknown frame kind ${h.kind}`));
      }
    });
    conn.on('data', (chunk: Buffer) => {
      const before = frames;
      try {
        reader.push(chunk);
        replies.flush();
        // The idle deadline restarts once per chunk that completed a frame, never on partial bytes.
        if (frames !== before) stream.arm();
      } catch (e) {
        replies.discard();
        if (!(e instanceof FramingError)) this.deps.log.error({ err: e, component: 'compact' }, 'compact frame handling failed');
        this.protocolErrors.inc({ reason: e instanceof FramingError ? 'framing' : 'internal' });
        closing = true;
        conn.destroy();
      }
    });
  }

  private state(): number {
    return this.stopping ? EngineState.STOPPING : EngineState.SERVING;
  }
}
