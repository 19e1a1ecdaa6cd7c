import type { ListenOptions, Server, Socket } from 'node:net';

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

/**
 * Starts `server` listening: on `takenOver` when a replaced process handed a listening socket over
 * ({@link listenOnTakenOver}), else with `options` (`net.Server.listen`'s: `host` and `port`, or a
 * descriptor passed by systemd as `{ fd }`). Every TCP front door and the admin listener start
 * this way.
 * @returns the bound TCP port once it listens (`options.port`, or 0, when the address is no TCP one).
 * @throws the listen error (EADDRINUSE, EACCES, …), as a rejection.
 */
export function listenTcpServer(server: Server, takenOver: Server | undefined, options: ListenOptions | { readonly fd: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    const done = (): void => {
      server.off('error', reject);
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : 'port' in options ? (options.port ?? 0) : 0);
    };
    if (takenOver) listenOnTakenOver(server, takenOver, done);
    else server.listen(options, done);
  });
}
