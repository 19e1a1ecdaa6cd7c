import type { Socket } from 'node:net';
import type { HandedConnection } from '../core/contracts/frontDoor.js';

/** How often the connections still busy are looked at during a hand-over (ms). */
const POLL_MS = 2;

/** One open connection of a door, as a hand-over sees it. */
export interface HandoverCandidate {
  readonly socket: Socket;
  /**
   * True when every request the door has read whole is answered (no asynchronous answer pending,
   * no complete request queued behind back-pressure) and the door is not closing the connection.
   * Bytes of a request not yet complete do not count: they go to the replacement ({@link received}).
   */
  settled(): boolean;
  /** Bytes the door has read of a request not yet complete (empty when none), for the replacement to read first. */
  received(): Buffer;
  /** The door's state of the connection, for the replacement process. */
  state(): HandedConnection['state'];
  /** Forgets the connection in the door (maps, gauges, deadline timer): it belongs to the replacement now. */
  forget(): void;
}

/**
 * Passes every connection to `pass` as soon as the answers to the requests already read are out,
 * without waiting for the peer to pause. Each round (in the timer phase of the event loop, where
 * no read is half processed) first stops reading at each socket's handle, so from then on the
 * bytes the peer sends wait in the kernel for the replacement; a connection whose door has
 * answered everything it read whole ({@link HandoverCandidate.settled}), with no byte left unread
 * or unsent in Node, is passed with the bytes of a request the door read only in part
 * ({@link HandedConnection.received}), which the replacement reads before the socket's own. A
 * multiplexed connection that always has requests in flight (the CoreDNS plugin's) is therefore
 * passed within the time its pending answers take, never closed for want of a pause. A connection
 * still not settled after `deadlineMs` (an answer that never settles, a peer that never reads its
 * answers) is closed. Resolves with the number closed so, once none is left.
 */
export function handOverConnections(
  candidates: () => Iterable<HandoverCandidate>,
  pass: (connection: HandedConnection) => void,
  deadlineMs = 10000,
): Promise<number> {
  const until = Date.now() + deadlineMs;
  let closed = 0;
  return new Promise((resolve) => {
    const round = (): void => {
      let busy = 0;
      for (const c of [...candidates()]) {
        const { socket } = c;
        if (socket.destroyed) continue;
        // Stopped again every round: a door resuming after back-pressure restarts reading.
        const stopped = stopReading(socket);
        if (stopped && c.settled() && socket.readableLength === 0 && socket.writableLength === 0) {
          const state = c.state();
          const received = c.received();
          c.forget();
          pass(received.length > 0 ? { socket, state, received } : { socket, state });
        } else if (Date.now() >= until) {
          closed++;
          socket.destroy();
        } else busy++;
      }
      if (busy === 0) resolve(closed);
      else setTimeout(round, POLL_MS);
    };
    round();
  });
}

/** The libuv stream under a `net.Socket` (Node's `_handle`; not part of its documented API). */
interface StreamHandle {
  readStop(): number;
}

/**
 * Stops reading at the socket's handle. `socket.pause()` only stops `data` events: libuv goes on
 * reading into the stream's buffer, and `child_process`'s `send(message, socket)` replaces the
 * handle's read callback with one that drops what it reads until the replacement acknowledges the
 * handle, so a request the peer sends in that interval would be lost. With reading stopped the
 * bytes stay in the kernel's socket buffer for the replacement. False when the handle is gone or
 * refuses (the connection is then handled as busy and closed at the deadline).
 */
function stopReading(socket: Socket): boolean {
  const handle = (socket as unknown as { _handle?: StreamHandle | null })._handle;
  if (!handle || typeof handle.readStop !== 'function') return false;
  return handle.readStop() === 0;
}
