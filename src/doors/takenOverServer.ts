import type { Server, Socket } from 'node:net';

/**
 * Listens with `server` (a DNS-over-TCP, HTTP or HTTPS server) on a TCP listening socket taken over
 * from the process this one replaces (`gslbd ctl replace`, `src/process/processHandover.ts`), and
 * calls `done` once it listens.
 *
 * The taken-over socket arrives as a `net.Server` that Node set listening on arrival, so it may
 * accept connections before the door listens on it; the hand-over holds those and emits them on
 * that `net.Server` once this process is up. Listening takes the socket's handle over (later
 * connections go to `server` directly), so the held ones are passed on here: without that, a
 * client that connected in the moment between the socket's arrival and the door's start would
 * wait, unanswered, on an accepted connection nobody reads.
 */
export function listenOnTakenOver(server: Server, takenOver: Server, done: () => void): void {
  takenOver.on('connection', (socket: Socket) => server.emit('connection', socket));
  server.listen(takenOver, done);
}
