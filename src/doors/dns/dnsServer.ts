import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { FrontDoor } from '../../core/contracts/frontDoor.js';
import { parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { longestWaiting, StreamConnection } from '../streamConnection.js';
import { loadFastPathAddon } from './fastPathAddon.js';
import { FastPathSocket } from './fastPathSocket.js';
import { MessageHandler, type DnsFrontDoorDeps } from './handleMessage.js';
import type { DnsListenerConfig } from './listenerSchema.js';

/** A bound listener: the same port on UDP and TCP. */
export interface BoundDnsListener {
  readonly address: string;
  readonly port: number;
}

/**
 * The standalone DNS listener (docs/PRODUCT.md §1): UDP and TCP on each configured address. TCP follows
 * RFC 7766: pipelined queries answered in order; an idle timeout that only a complete query (or
 * the drain of unsent replies) restarts, so a peer trickling bytes is closed too (§6.2.3); a
 * connection cap (at the cap a new connection replaces the one idle longest if that has been idle
 * for half the timeout, else it is closed at once); and back-pressure (reading and answering
 * pause while replies are unsent).
 * A message that cannot be answered is dropped; a TCP frame shorter than a header closes that
 * connection only. A reply the engine answers asynchronously is sent when it settles (over TCP
 * possibly after replies to later queries, which RFC 7766 §7 allows); every other reply is sent
 * in order, at once.
 */
export class DnsServer implements FrontDoor {
  private readonly udp: UdpSocket[] = [];
  private readonly fast: FastPathSocket[] = [];
  private readonly tcp: Server[] = [];
  private readonly connections = new Map<Socket, StreamConnection>();
  private readonly messages: MessageHandler;
  private stopping = false;
  readonly bound: BoundDnsListener[] = [];

  constructor(
    private readonly deps: DnsFrontDoorDeps,
    private readonly listeners: readonly DnsListenerConfig[],
  ) {
    this.messages = new MessageHandler(deps);
  }

  /**
   * Binds every listener. Port 0 picks a free port shared by UDP and TCP.
   * @throws Error when an address cannot be bound (in use, not local).
   */
  async start(): Promise<void> {
    for (const l of this.listeners) {
      for (let attempt = 0; ; attempt++) {
        const tcp = this.tcpServer();
        const port = await listenTcp(tcp, l.address, l.port);
        try {
          const fast = this.fastPathSocket(l.address, port);
          if (fast) this.fast.push(fast);
          else this.udp.push(await this.udpSocket(l.address, port));
          this.tcp.push(tcp);
          this.bound.push({ address: l.address, port });
          break;
        } catch (e) {
          tcp.close();
          if (l.port !== 0 || attempt >= 20) throw e;
        }
      }
    }
  }

  /** `dns`: the bound addresses as `address:port` (`[address]:port` for IPv6). */
  describe(): Record<string, unknown> {
    return { dns: this.bound.map((b) => `${b.address.includes(':') ? `[${b.address}]` : b.address}:${b.port}`) };
  }

  /** Counters of the native fast path summed over its sockets; undefined when it is not serving. */
  fastPathStats(): { hits: number; misses: number; dropped: number; installed: number } | undefined {
    if (this.fast.length === 0) return undefined;
    const sum = { hits: 0, misses: 0, dropped: 0, installed: 0 };
    for (const f of this.fast) {
      const s = f.stats();
      sum.hits += s.hits;
      sum.misses += s.misses;
      sum.dropped += s.dropped;
      sum.installed += s.installed;
    }
    return sum;
  }

  /** Closes every socket and connection. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const f of this.fast.splice(0)) f.close();
    for (const c of this.connections.keys()) c.destroy();
    await Promise.all([
      ...this.udp.map((s) => new Promise<void>((r) => s.close(() => r()))),
      ...this.tcp.map((s) => new Promise<void>((r) => s.close(() => r()))),
    ]);
  }

  /**
   * The native fast path's sockets for one address when `dns.fastPath.enabled` and the addon is
   * built; undefined otherwise (Node's socket serves, with a warning when the addon is missing).
   * @throws Error when the address cannot be bound.
   */
  private fastPathSocket(address: string, port: number): FastPathSocket | undefined {
    const { enabled, threads } = this.deps.behaviour.fastPath;
    if (!enabled) return undefined;
    const { addon, error } = loadFastPathAddon();
    if (!addon) {
      this.deps.log.warn({ error }, 'dns.fastPath: the native addon is not available; Node sockets serve UDP');
      return undefined;
    }
    const onPublish = this.deps.engine.onPublish?.bind(this.deps.engine);
    return new FastPathSocket(addon, this.messages, this.deps.log, onPublish, address, port, threads > 0 ? threads : availableParallelism());
  }

  private udpSocket(address: string, port: number): Promise<UdpSocket> {
    const socket = createSocket({ type: isIPv6(address) ? 'udp6' : 'udp4', ipv6Only: isIPv6(address) });
    // Most datagrams come from a few resolvers: parse a peer address only when it changes.
    let peerText = '';
    let peer: IpAddress | undefined;
    socket.on('message', (msg, rinfo) => {
      let reply: Buffer | null | Promise<Buffer>;
      try {
        if (rinfo.address !== peerText || !peer) {
          peer = parseIp(rinfo.address);
          peerText = rinfo.address;
        }
        reply = this.messages.handle(msg, 'udp', peer);
      } catch (e) {
        this.deps.log.error({ err: e }, 'UDP message handling failed');
        return;
      }
      if (reply instanceof Promise) this.sendLater(socket, reply, rinfo.port, rinfo.address);
      else if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => {
        socket.off('error', reject);
        socket.on('error', (e) => this.deps.log.warn({ err: e }, 'UDP socket error'));
        resolve(socket);
      });
    });
  }

  /** Sends an asynchronous UDP reply when it settles, unless the socket closed meanwhile. */
  private sendLater(socket: UdpSocket, reply: Promise<Buffer>, port: number, address: string): void {
    reply.then(
      (bytes) => {
        if (!this.stopping) socket.send(bytes, port, address);
      },
      (e: unknown) => this.deps.log.error({ err: e }, 'UDP message handling failed'),
    );
  }

  private tcpServer(): Server {
    const { tcpIdleTimeoutMs, tcpMaxConnections } = this.deps.behaviour;
    return createServer({ noDelay: true }, (conn) => {
      if (this.connections.size >= tcpMaxConnections && !this.evictIdle(tcpIdleTimeoutMs / 2)) {
        conn.destroy();
        return;
      }
      const stream = new StreamConnection(conn, tcpIdleTimeoutMs, () => {
        stream.arm();
        serve();
      });
      this.connections.set(conn, stream);
      conn.on('close', () => this.connections.delete(conn));
      conn.on('error', () => conn.destroy());
      stream.arm();
      const serve = this.serveTcp(stream);
    });
  }

  /** Closes the connection idle longest if it has had no complete query for `minIdleMs` (see {@link longestWaiting}). */
  private evictIdle(minIdleMs: number): boolean {
    const idle = longestWaiting(this.connections.values(), minIdleMs);
    if (!idle) return false;
    this.connections.delete(idle.socket);
    idle.socket.destroy();
    return true;
  }

  /**
   * Reads length-prefixed queries (RFC 1035 §4.2.2) and answers them in order. The idle deadline
   * restarts on each complete query, never on partial bytes. While replies wait to drain, the
   * queries already received stay queued and are answered after the drain (returned function).
   */
  private serveTcp(stream: StreamConnection): () => void {
    const conn = stream.socket;
    const peer = parseIp(conn.remoteAddress ?? '0.0.0.0');
    let pending: Buffer = Buffer.alloc(0);
    const serve = (): void => {
      while (pending.length >= 2 && !stream.paused) {
        const len = pending.readUInt16BE(0);
        if (pending.length < 2 + len) break;
        const msg = pending.subarray(2, 2 + len);
        pending = pending.subarray(2 + len);
        if (len < 12) {
          conn.destroy();
          return;
        }
        stream.arm();
        let reply: Buffer | null | Promise<Buffer>;
        try {
          reply = this.messages.handle(msg, 'tcp', peer);
        } catch (e) {
          this.deps.log.error({ err: e }, 'TCP message handling failed');
          conn.destroy();
          return;
        }
        if (reply instanceof Promise) {
          reply.then(
            (bytes) => {
              if (!conn.destroyed) stream.send(lengthPrefixed(bytes));
            },
            (e: unknown) => {
              this.deps.log.error({ err: e }, 'TCP message handling failed');
              conn.destroy();
            },
          );
        } else if (reply) stream.send(lengthPrefixed(reply));
      }
    };
    conn.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      serve();
    });
    return serve;
  }
}

/** A reply with its two-byte length prefix (RFC 1035 §4.2.2). */
function lengthPrefixed(reply: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(2 + reply.length);
  frame.writeUInt16BE(reply.length, 0);
  reply.copy(frame, 2);
  return frame;
}

function listenTcp(server: Server, address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address, port, ipv6Only: isIPv6(address) }, () => {
      server.off('error', reject);
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : port);
    });
  });
}
