import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import ipaddr from 'ipaddr.js';
import { createServer, isIPv6, type Server, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { FrontDoor, HandedConnection, ListeningSocket } from '../../core/contracts/frontDoor.js';
import { parseIp, type IpAddress } from '../../core/net/ipAddress.js';
import { handOverConnections, type HandoverCandidate } from '../connectionHandover.js';
import { listenTcpServer } from '../takenOverServer.js';
import { longestWaiting, StreamConnection } from '../streamConnection.js';
import { loadFastPathAddon, type FastPathStats } from './fastPathAddon.js';
import { FastPathMetrics } from './fastPathMetrics.js';
import { EngineMetrics } from '../../core/telemetry/engineMetrics.js';
import { FastPathSocket } from './fastPathSocket.js';
import { MessageHandler, type DnsFrontDoorDeps } from './handleMessage.js';
import type { DnsDoorConfig } from './dnsDoor.js';
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
 * connection cap and a per-client cap with fair eviction (`tcpMaxConnections`,
 * `tcpMaxConnectionsPerClient` in `listenerSchema.ts`: a client over its share loses its places
 * first); and back-pressure (reading and answering pause while replies are unsent).
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
  /** Per TCP connection, what a hand-over asks of it (`../connectionHandover.ts`). */
  private readonly handoverState = new Map<Socket, Pick<HandoverCandidate, 'settled' | 'received'>>();
  /** Open TCP connections by client ({@link tcpClientKey}). */
  private readonly byClient = new Map<string, Set<StreamConnection>>();
  private readonly messages: MessageHandler;
  /**
   * The fast path's handler for re-answering its templates' queries after a publish: answered by
   * the engine's `QueryEngine.unasked` view (no rotation step, no draw from the shared
   * random source, no cache use marks or probe demand), counted in counters nobody reads and never
   * logged — nobody asked them.
   */
  private rewarmMessages: MessageHandler | undefined;
  private stopping = false;
  /** Asynchronous UDP replies not sent yet: a hand-over closes this process's UDP sockets only after them. */
  private pendingUdp = 0;
  private udpSettled: (() => void) | undefined;
  readonly bound: BoundDnsListener[] = [];
  /** The listening sockets by hand-over key ({@link listening}). */
  private readonly keyed = new Map<string, ListeningSocket>();

  constructor(
    private deps: DnsFrontDoorDeps,
    private readonly listeners: readonly DnsListenerConfig[],
  ) {
    this.messages = new MessageHandler(deps);
  }

  /**
   * Applies a reload's root `dns` settings to later queries and connections: `queryLogSampleRate`,
   * `udpPayloadSize` and the TCP limits (connections already open keep their idle timeout).
   * The sampling rate reaches the native fast path's threads too (from their next batch on);
   * `dns.fastPath` itself is restart-only.
   */
  reconfigure(config: DnsDoorConfig): void {
    const behaviour = config.dns;
    for (const f of this.fast) f.setSampleRate(behaviour.queryLogSampleRate);
    this.deps = { ...this.deps, behaviour };
    this.messages.reconfigure(behaviour);
    this.rewarmMessages?.reconfigure({ ...behaviour, queryLogSampleRate: 0 });
  }

  /**
   * Binds every listener. Port 0 picks a free port shared by UDP and TCP.
   * @throws Error when an address cannot be bound (in use, not local).
   */
  async start(inherited: ReadonlyMap<string, ListeningSocket> = new Map()): Promise<void> {
    for (const [i, l] of this.listeners.entries()) {
      const keys = { tcp: `tcp|${i}|${l.address}|${l.port}`, udp: `udp|${i}|${l.address}|${l.port}` };
      const oldTcp = inherited.get(keys.tcp);
      const oldUdp = inherited.get(keys.udp);
      if (oldTcp && !('send' in oldTcp)) {
        const tcp = this.tcpServer();
        const port = await listenTcpServer(tcp, oldTcp, { host: l.address, port: l.port, ipv6Only: isIPv6(l.address) });
        // A Node UDP socket is taken over; a replaced process whose fast path served UDP passed none
        // (native sockets), and this one binds its own beside it (SO_REUSEPORT).
        const udp = oldUdp && 'send' in oldUdp ? oldUdp : undefined;
        if (udp) this.serveUdp(udp);
        await this.bindUdp(l.address, port, udp, keys.udp);
        this.tcp.push(tcp);
        this.bound.push({ address: l.address, port });
        this.keyed.set(keys.tcp, tcp);
        continue;
      }
      for (let attempt = 0; ; attempt++) {
        const tcp = this.tcpServer();
        const port = await listenTcpServer(tcp, undefined, { host: l.address, port: l.port, ipv6Only: isIPv6(l.address) });
        try {
          await this.bindUdp(l.address, port, undefined, keys.udp);
          this.tcp.push(tcp);
          this.bound.push({ address: l.address, port });
          this.keyed.set(keys.tcp, tcp);
          break;
        } catch (e) {
          tcp.close();
          if (l.port !== 0 || attempt >= 20) throw e;
        }
      }
    }
  }

  /**
   * The UDP side of one listener: `taken` (a socket taken over, already served), else the native
   * fast path's sockets when enabled, else a Node socket. Node sockets are keyed for a later hand-over.
   * @throws Error when the address cannot be bound.
   */
  private async bindUdp(address: string, port: number, taken: UdpSocket | undefined, key: string): Promise<void> {
    const fast = taken ? undefined : this.fastPathSocket(address, port);
    if (fast) {
      this.fast.push(fast);
      return;
    }
    const udp = taken ?? (await this.udpSocket(address, port));
    this.udp.push(udp);
    this.keyed.set(key, udp);
  }

  /** `dns`: the bound addresses as `address:port` (`[address]:port` for IPv6). */
  describe(): Record<string, unknown> {
    return { dns: this.bound.map((b) => `${b.address.includes(':') ? `[${b.address}]` : b.address}:${b.port}`) };
  }

  /** The fast path's re-answering pass after the last publish, summed over its addresses (undefined without the fast path). */
  fastPathRewarm(): { readonly installed: number; readonly running: boolean } | undefined {
    if (this.fast.length === 0) return undefined;
    let installed = 0;
    let running = false;
    for (const f of this.fast) {
      const r = f.rewarmProgress();
      installed += r.installed;
      running ||= r.running;
    }
    return { installed, running };
  }

  /**
   * The fast path's copy of the engine's class tables at the last publish (or at start), summed
   * over its addresses: tables copied, milliseconds spent, whether it still runs, and the tables
   * held now (undefined without the fast path).
   */
  fastPathClassTables(): { readonly tables: number; readonly ms: number; readonly running: boolean; readonly held: number } | undefined {
    if (this.fast.length === 0) return undefined;
    const sum = { tables: 0, ms: 0, running: false, held: 0 };
    for (const f of this.fast) {
      const p = f.classTableProgress();
      sum.tables += p.tables;
      sum.ms += p.ms;
      sum.running ||= p.running;
      sum.held += f.classTableCount;
    }
    return sum;
  }

  /** Counters of the native fast path summed over its sockets; undefined when it is not serving. */
  fastPathStats(): FastPathStats | undefined {
    if (this.fast.length === 0) return undefined;
    const sum = { hits: 0, misses: 0, sampled: 0, dropped: 0, limited: 0, slipped: 0, installed: 0, classHits: 0, classInstalled: 0 };
    for (const f of this.fast) {
      const s = f.stats();
      sum.hits += s.hits;
      sum.misses += s.misses;
      sum.sampled += s.sampled;
      sum.dropped += s.dropped;
      sum.limited += s.limited;
      sum.slipped += s.slipped;
      sum.installed += s.installed;
      sum.classHits += s.classHits;
      sum.classInstalled += s.classInstalled;
    }
    return sum;
  }

  /** The UDP and TCP sockets of each listener, keyed `udp|INDEX|ADDRESS|CONFIGURED_PORT` and `tcp|…`. */
  listening(): ReadonlyMap<string, ListeningSocket> {
    return this.keyed;
  }

  /**
   * Hand-over to a replacement process listening on the same sockets: this process's TCP listeners
   * close at once; its UDP sockets after the asynchronous replies still pending (until then it
   * answers what it reads, so no datagram is dropped); each TCP connection stops reading and is
   * passed once the answers to the queries it read are out, with the bytes of a query read in part.
   */
  async handOver(pass: (connection: HandedConnection) => void): Promise<number> {
    for (const s of this.tcp) s.close();
    const candidates = (): HandoverCandidate[] =>
      [...this.connections].map(([socket, stream]) => ({
        socket,
        settled: this.handoverState.get(socket)?.settled ?? (() => true),
        received: this.handoverState.get(socket)?.received ?? (() => Buffer.alloc(0)),
        state: () => ({}),
        forget: () => {
          stream.disarm();
          this.connections.delete(socket);
          this.handoverState.delete(socket);
          for (const group of this.byClient.values()) group.delete(stream);
        },
      }));
    const [closed] = await Promise.all([handOverConnections(candidates, pass), this.udpDrained()]);
    this.stopping = true;
    // The fast path's sockets are native (SO_REUSEPORT) and are not passed: the replacement binds
    // its own beside them, so closing these leaves the port served.
    for (const f of this.fast.splice(0)) f.close();
    await Promise.all(this.udp.map((s) => new Promise<void>((r) => s.close(() => r()))));
    return closed;
  }

  /** Serves a TCP connection the replaced process passed, as one accepted here. */
  adopt(connection: HandedConnection): void {
    this.accept(connection.socket);
  }

  private udpDrained(): Promise<void> {
    if (this.pendingUdp === 0) return Promise.resolve();
    return new Promise((resolve) => (this.udpSettled = resolve));
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
    const { enabled, threads, rateLimit, rewarmTemplates } = this.deps.behaviour.fastPath;
    if (!enabled) {
      if (rateLimit.responsesPerSecond > 0) this.deps.log.warn('dns.fastPath.rateLimit applies to the fast path only, which is off: responses are not limited');
      return undefined;
    }
    const { addon, error } = loadFastPathAddon();
    if (!addon) {
      this.deps.log.warn({ error }, 'dns.fastPath: the native addon is not available; Node sockets serve UDP (and responses are not rate-limited)');
      return undefined;
    }
    const onPublish = this.deps.engine.onPublish?.bind(this.deps.engine);
    const { queryLogSampleRate } = this.deps.behaviour;
    // Re-answering needs an engine that answers without moving state (QueryEngine.unasked): with rotation advanced by queries nobody asked, this listener's answers would no longer be the engine's.
    const unasked = rewarmTemplates ? this.deps.engine.unasked?.() : undefined;
    if (rewarmTemplates && unasked === undefined)
      this.deps.log.warn('dns.fastPath.rewarmTemplates: the engine cannot answer without moving its state; templates are not re-answered at publish');
    if (unasked !== undefined)
      this.rewarmMessages ??= new MessageHandler({
        ...this.deps,
        engine: unasked,
        metrics: new EngineMetrics(),
        behaviour: { ...this.deps.behaviour, queryLogSampleRate: 0 },
      });
    return new FastPathSocket(
      addon,
      this.messages,
      this.deps.log,
      onPublish,
      address,
      port,
      threads > 0 ? threads : availableParallelism(),
      queryLogSampleRate,
      FastPathMetrics.of(this.deps.metrics.registry),
      this.deps.metrics,
      rateLimit.responsesPerSecond > 0
        ? {
            rate: rateLimit.responsesPerSecond,
            burst: rateLimit.burst ?? rateLimit.responsesPerSecond,
            slip: rateLimit.slip,
            ipv4Prefix: rateLimit.ipv4PrefixLength,
            ipv6Prefix: rateLimit.ipv6PrefixLength,
            entries: rateLimit.tableSize,
          }
        : undefined,
      this.rewarmMessages,
      this.deps.engine.classTables?.bind(this.deps.engine),
    );
  }

  private udpSocket(address: string, port: number): Promise<UdpSocket> {
    const socket = createSocket({ type: isIPv6(address) ? 'udp6' : 'udp4', ipv6Only: isIPv6(address) });
    return new Promise((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, address, () => {
        socket.off('error', reject);
        this.serveUdp(socket);
        resolve(socket);
      });
    });
  }

  /** Answers the datagrams of a bound UDP socket. */
  private serveUdp(socket: UdpSocket): void {
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
    socket.on('error', (e) => this.deps.log.warn({ err: e }, 'UDP socket error'));
  }

  /** Sends an asynchronous UDP reply when it settles, unless the socket closed meanwhile. */
  private sendLater(socket: UdpSocket, reply: Promise<Buffer>, port: number, address: string): void {
    this.pendingUdp++;
    reply
      .then(
        (bytes) => {
          if (!this.stopping) socket.send(bytes, port, address);
        },
        (e: unknown) => this.deps.log.error({ err: e }, 'UDP message handling failed'),
      )
      .finally(() => {
        if (--this.pendingUdp === 0) this.udpSettled?.();
      });
  }

  private tcpServer(): Server {
    return createServer({ noDelay: true }, (conn) => this.accept(conn));
  }

  /** Serves a new TCP connection (accepted here or passed by a replaced process) within the caps. */
  private accept(conn: Socket): void {
    const { tcpIdleTimeoutMs, tcpMaxConnections, tcpMaxConnectionsPerClient } = this.deps.behaviour;
    // RFC 7766 §6.2.3: under pressure, idle connections are closed sooner than the idle timeout.
    const pressureWaitMs = tcpIdleTimeoutMs / 2;
    const client = tcpClientKey(conn.remoteAddress ?? '');
    const own = this.byClient.get(client);
    const held = own?.size ?? 0;
    // At its own limit a client competes only with itself.
    if (own && held >= tcpMaxConnectionsPerClient && !this.evict(longestWaiting(own, pressureWaitMs))) {
      conn.destroy();
      return;
    }
    if (this.connections.size >= tcpMaxConnections && !this.evict(this.fairVictim(held, pressureWaitMs))) {
      conn.destroy();
      return;
    }
    conn.setNoDelay(true);
    const stream = new StreamConnection(conn, tcpIdleTimeoutMs, () => {
      stream.arm();
      serve();
    });
    this.connections.set(conn, stream);
    let group = this.byClient.get(client);
    if (!group) this.byClient.set(client, (group = new Set()));
    group.add(stream);
    conn.on('close', () => {
      this.connections.delete(conn);
      this.handoverState.delete(conn);
      group.delete(stream);
      if (group.size === 0 && this.byClient.get(client) === group) this.byClient.delete(client);
    });
    conn.on('error', () => conn.destroy());
    stream.arm();
    const serve = this.serveTcp(stream);
  }

  /**
   * The connection to replace at the total cap for a new connection of a client holding `held`:
   * while the client holding the most connections holds at least two more than that, its
   * connection waiting longest for a query, however briefly (a fair share: the new client takes the
   * place, and no two clients can take places from each other in turn); else, of that largest
   * client, then of all, the connection waiting longest if that waited `minWaitMs`.
   */
  private fairVictim(held: number, minWaitMs: number): StreamConnection | undefined {
    let largest: Set<StreamConnection> | undefined;
    for (const group of this.byClient.values()) if (!largest || group.size > largest.size) largest = group;
    if (!largest) return longestWaiting(this.connections.values(), minWaitMs);
    if (largest.size > held + 1) {
      const overShare = longestWaiting(largest, 0);
      if (overShare) return overShare;
    }
    return longestWaiting(largest, minWaitMs) ?? longestWaiting(this.connections.values(), minWaitMs);
  }

  /** Closes `victim` to make room; false when there is none. */
  private evict(victim: StreamConnection | undefined): boolean {
    if (!victim) return false;
    this.connections.delete(victim.socket);
    for (const group of this.byClient.values()) group.delete(victim);
    victim.socket.destroy();
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
    let answering = 0;
    // Unpaused, the loop below leaves only a query read in part in `pending`: that goes to a replacement.
    this.handoverState.set(conn, { settled: () => answering === 0 && !stream.paused, received: () => Buffer.from(pending) });
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
          answering++;
          reply.then(
            (bytes) => {
              answering--;
              if (!conn.destroyed) stream.send(lengthPrefixed(bytes));
            },
            (e: unknown) => {
              answering--;
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

/**
 * The client a TCP connection counts against: its IPv4 address (also when IPv4-mapped), or the
 * /64 of its IPv6 address (one host usually holds a whole /64; RFC 7421). Text that is no address
 * is its own key.
 */
export function tcpClientKey(remote: string): string {
  if (!ipaddr.isValid(remote)) return remote;
  const a = ipaddr.process(remote);
  return a.kind() === 'ipv4' ? a.toString() : `${(a as ipaddr.IPv6).parts.slice(0, 4).join(':')}::/64`;
}

/** A reply with its two-byte length prefix (RFC 1035 §4.2.2). */
function lengthPrefixed(reply: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(2 + reply.length);
  frame.writeUInt16BE(reply.length, 0);
  reply.copy(frame, 2);
  return frame;
}
