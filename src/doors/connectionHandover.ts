import type { Socket } from 'node:net';
import type { HandedConnection } from '../core/contracts/frontDoor.js';

/** How often the connections still busy are looked at during a hand-over (ms). */
const POLL_MS = 2;

/** One open connection of a door, as a hand-over sees it. */
export interface HandoverCandidate {
  readonly socket: Socket;
  /** True when nothing of a request is buffered or being answered in the door (partial bytes, an asynchronous answer). */
  quiet(): boolean;
  /** The door's state of the connection, for the replacement process. */
  state(): HandedConnection['state'];
  /** Forgets the connection in the door (maps, gauges, deadline timer): it belongs to the replacement now. */
  forget(): void;
}

/**
 * Passes every connection to `pass` as soon as it is between two requests: the door holds no part
 * of a request (`quiet`), Node holds no unread byte and no unsent byte. The check runs in the
 * timer phase of the event loop, where no read is half processed, and the socket stops reading at
 * its handle before it is passed, so bytes the peer sends after the check wait in the kernel for
 * the replacement process. Connections still busy after `deadlineMs` (a peer that never completes
 * its request) are closed. Resolves when none is left.
 */
export function handOverConnections(
  candidates: () => Iterable<HandoverCandidate>,
  pass: (connection: HandedConnection) => void,
  deadlineMs = 10000,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  return new Promise((resolve) => {
    const round = (): void => {
      let busy = 0;
      for (const c of [...candidates()]) {
        const { socket } = c;
        if (socket.destroyed) continue;
        if (c.quiet() && socket.readableLength === 0 && socket.writableLength === 0 && stopReading(socket)) {
          const state = c.state();
          c.forget();
          pass({ socket, state });
        } else if (Date.now() >= until) socket.destroy();
        else busy++;
      }
      if (busy === 0) resolve();
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
