import { connect as netConnect, type Socket } from 'node:net';

/** What a check connection reports to the check that opened it. */
export interface ConnectionEvents {
  /** The TCP handshake completed. */
  connected(): void;
  /** Bytes arrived. The chunk is borrowed (a view of a shared buffer): copy what you keep. */
  data(chunk: Buffer): void;
  /** The peer closed its side. */
  ended(): void;
  /** A socket error (its code, e.g. `ECONNREFUSED`); may come more than once while tearing down. */
  failed(code: string): void;
}

/** An open check connection: its socket, to write to, and how to end it when the check is decided. */
export interface CheckConnection {
  readonly socket: Socket;
  /**
   * Ends the connection once the check has its verdict, with a TCP RST when it is established
   * (see {@link resetCheckConnection}); a connection still connecting is aborted. Idempotent.
   */
  close(): void;
}

/**
 * Ends a check's TCP connection with an RST (`SO_LINGER` 0: Node's `socket.resetAndDestroy()`,
 * libuv `uv_tcp_close_reset`) instead of a FIN exchange, as HAProxy ends its health-check
 * connections: "the RST is sent at the end of a health check to release the connection once the
 * response arrives" (haproxy/haproxy#2447); "RST termination saves ephemeral ports"
 * (haproxy/haproxy#560). One packet instead of FIN/ACK both ways, and no TIME_WAIT socket on
 * either side: at 2,000 checks/s a FIN close leaves ~120,000 sockets in TIME_WAIT for 60 s on the
 * side that closed first. The verdict is taken before the close, so whatever the server still
 * had to send (the rest of a body nobody reads) cannot turn it into a failure; the server sees
 * `ECONNRESET` on its next write, and may log it (HAProxy's checks cause the same, #560).
 *
 * A socket still connecting is destroyed (the kernel drops the half-open attempt; `resetAndDestroy`
 * would keep it until the handshake ends, up to the kernel's SYN retries for a silent target), and
 * one whose write side is already shut down (a FIN sent: libuv cannot reset it) is destroyed too.
 */
export function resetCheckConnection(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.connecting || socket.writableEnded) socket.destroy();
  else socket.resetAndDestroy();
}

/**
 * The one read buffer of every pooled connection. Node fills it and calls back synchronously on
 * each read, and nothing keeps a reference to it past the callback, so the connections share it;
 * without it every read allocates a 64 KiB buffer that only a garbage collection frees.
 */
const READ_BUFFER = Buffer.allocUnsafe(16 * 1024);

class PooledConnection implements CheckConnection {
  readonly socket: Socket;
  events: ConnectionEvents | undefined;

  /** Opens the first connection (`onread` is taken when the socket is created). */
  constructor(pool: CheckSockets, address: string, port: number, events: ConnectionEvents) {
    this.events = events;
    this.socket = netConnect({
      host: address,
      port,
      onread: {
        buffer: READ_BUFFER,
        callback: (n, buf) => {
          this.events?.data((buf as Buffer).subarray(0, n));
          return true;
        },
      },
    });
    this.socket.on('connect', () => this.events?.connected());
    this.socket.on('end', () => this.events?.ended());
    this.socket.on('error', (e: NodeJS.ErrnoException) => this.events?.failed(e.code ?? e.message));
    this.socket.on('close', () => {
      this.events = undefined;
      pool.release(this);
    });
  }

  close(): void {
    resetCheckConnection(this.socket);
  }
}

/**
 * New TCP connections for checks (one per check, as a real client arrives) over reused
 * `net.Socket` objects. Node supports connecting a `Socket` again after its `close` event
 * (`socket.connect()` docs; `initSocketHandle` "re-using a closed Socket"): each connection still
 * gets a new kernel socket and handshake, but not a new JavaScript socket with its stream state
 * and listeners, which was the largest part of a check's user CPU (docs/BENCHMARKS-HISTORY.md, health).
 * A socket returns to the pool on `close`, after every event of its last connection, so a check
 * never sees another check's events. At most `maxIdle` closed sockets are kept.
 */
export class CheckSockets {
  private readonly idle: PooledConnection[] = [];

  constructor(private readonly maxIdle = 256) {}

  /**
   * Connects to `address`:`port` (an IP literal: no name lookup) and reports to `events` until
   * the socket closes. {@link CheckConnection.close} it when the check is decided.
   */
  connect(address: string, port: number, events: ConnectionEvents): CheckConnection {
    const c = this.idle.pop();
    if (!c) return new PooledConnection(this, address, port, events);
    c.events = events;
    c.socket.connect(port, address);
    return c;
  }

  /** Closed sockets waiting for reuse. */
  get idleCount(): number {
    return this.idle.length;
  }

  /** @internal called by a connection on `close`. */
  release(c: PooledConnection): void {
    if (this.idle.length < this.maxIdle) this.idle.push(c);
  }
}

/** The pool the TCP and plain-HTTP checks share. */
export const checkSockets = new CheckSockets();
