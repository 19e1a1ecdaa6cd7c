import type { Socket } from 'node:net';

/**
 * One stream connection of a front door (DNS over TCP, the PowerDNS and compact Unix sockets):
 * back-pressure on replies and a request deadline.
 *
 * Back-pressure: when `write()` returns false (the peer does not read its replies) reading pauses
 * and {@link paused} is true until the replies drain; callers stop answering while paused and
 * continue from `onDrain`. One `drain` listener per pause, never one per reply (Node warns
 * after ten and prints the warning to stderr, outside the JSON log).
 *
 * Deadline: {@link arm} starts (or restarts) a timer of `timeoutMs`; when it fires the connection
 * is destroyed and `onTimeout` runs. Callers arm it when they start waiting for a request and
 * re-arm it only when a request is complete (or a reply drained), never on partial bytes: a
 * peer that trickles a byte at a time is still closed (slowloris; RFC 7766 §6.2.3). A deadline that
 * fires closes the connection only after the event loop's next I/O poll: Node runs timers before it
 * reads sockets, so after a stall (a reload, a GC pause, a loaded machine) a request already waiting
 * in the socket would otherwise lose to its own deadline. Reading it re-arms (or disarms) the
 * deadline, which cancels the close.
 */
export class StreamConnection {
  /** True while reading is paused because replies wait to drain. */
  paused = false;
  /** When the deadline was last (re)started (ms since the epoch): ranks connections by idleness. */
  armedAtMs = 0;
  private timer: NodeJS.Timeout | undefined;
  /** True from a fired deadline until the close after the next I/O poll; arm/disarm cancel it. */
  private expiring = false;

  /**
   * @param socket the connection.
   * @param timeoutMs request deadline (ms); 0 disables it.
   * @param onDrain called after a pause, once the replies drained and reading resumed.
   * @param onTimeout called when the deadline fired, after the socket was destroyed.
   */
  constructor(
    readonly socket: Socket,
    private readonly timeoutMs: number,
    private readonly onDrain?: () => void,
    private readonly onTimeout?: () => void,
  ) {
    socket.once('close', () => this.disarm());
  }

  /** Writes a reply; pauses reading when the send buffer is full. */
  send(data: Buffer | string): void {
    if (this.socket.write(data) || this.paused) return;
    this.paused = true;
    this.socket.pause();
    this.socket.once('drain', this.drained);
  }

  /** (Re)starts the deadline. */
  arm(): void {
    this.expiring = false;
    if (this.timeoutMs <= 0) return;
    this.armedAtMs = Date.now();
    if (this.timer) this.timer.refresh();
    else this.timer = setTimeout(this.expired, this.timeoutMs).unref();
  }

  /** Stops the deadline (nothing is awaited from the peer). */
  disarm(): void {
    this.expiring = false;
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** True while the deadline runs. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  private readonly drained = (): void => {
    this.paused = false;
    this.socket.resume();
    this.onDrain?.();
  };

  private readonly expired = (): void => {
    this.timer = undefined;
    this.expiring = true;
    setImmediate(this.closeIfStillExpiring);
  };

  private readonly closeIfStillExpiring = (): void => {
    if (!this.expiring || this.socket.destroyed) return;
    this.expiring = false;
    this.socket.destroy();
    this.onTimeout?.();
  };
}

/**
 * The connection to close to make room at a connection cap (RFC 7766 §6.2.3: under pressure,
 * close idle connections sooner): of those whose deadline runs, the one armed longest ago, if
 * that was at least `minWaitMs` ago; undefined when none qualifies. A scan: it runs only at the
 * cap, over at most the cap's connections.
 */
export function longestWaiting(connections: Iterable<StreamConnection>, minWaitMs: number, nowMs = Date.now()): StreamConnection | undefined {
  let oldest: StreamConnection | undefined;
  for (const c of connections) if (c.armed && (!oldest || c.armedAtMs < oldest.armedAtMs)) oldest = c;
  return oldest && nowMs - oldest.armedAtMs >= minWaitMs ? oldest : undefined;
}
