import { chmodSync, lstatSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { ListeningSocket } from '../core/contracts/frontDoor.js';
import { activatedSockets } from './activatedSockets.js';

/** Longest Unix socket path Linux accepts (`sun_path` is 108 bytes with the terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Listens on a Unix socket for a front door (the PowerDNS and compact sockets) and sets its file
 * mode. A socket file left behind by a process that is gone (SIGKILL, crash) is replaced, but
 * only after a connection attempt to it is refused, so a running engine's socket is never taken
 * over. When the service manager passed a listening socket bound to `path`
 * ({@link inheritedUnixSocket}), that socket is used as it is: connections made while no engine
 * ran (a restart) are waiting in it, and are served now; so is `inherited`, the listening socket
 * taken over from the process this one replaces (`gslbd ctl replace`).
 *
 * The socket is bound under a temporary name beside `path` and renamed onto it: Node (libuv)
 * removes the path a socket was bound to when the server closes, so a process handing its socket
 * over to a replacement would otherwise remove the file the replacement listens on. Renamed, the
 * socket file also appears only once it listens with its mode set.
 * @param what the front door's name, for error messages ("PowerDNS", "compact").
 * @param mode octal file mode text, e.g. "0660".
 * @throws Error when the path is longer than {@link MAX_SOCKET_PATH_BYTES}, exists and is not a
 *   socket, is in use by a live listener, or cannot be bound.
 */
export async function listenUnixSocket(what: string, path: string, mode: string, onConnection: (conn: Socket) => void, takenOver?: Server): Promise<Server> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(`${what} socket path "${path}" is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
  }
  if (takenOver) {
    takenOver.on('connection', onConnection);
    return takenOver;
  }
  const server = createServer(onConnection);
  const fd = inheritedUnixSocket(path);
  if (fd === undefined) await removeStaleSocket(what, path);
  const bindPath = fd === undefined ? temporaryName(path) : undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(fd !== undefined ? { fd } : bindPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // An inherited socket's file belongs to whoever bound it (systemd sets its mode: SocketMode=).
  if (fd !== undefined) inherited.add(server);
  else {
    chmodSync(bindPath!, Number.parseInt(mode, 8));
    if (bindPath !== path) renameSync(bindPath!, path);
  }
  return server;
}

/** A name beside `path` to bind to before the rename (`path` itself when the longer name would not fit). */
function temporaryName(path: string): string {
  const name = `${path}.${process.pid}`;
  return Buffer.byteLength(name) > MAX_SOCKET_PATH_BYTES ? path : name;
}

/** Servers listening on a socket passed by the service manager: their file outlives this process. */
const inherited = new WeakSet<Server>();
/** Servers whose listening socket a replacement process took over: their file is the replacement's. */
const handedOver = new WeakSet<Server>();

/** The hand-over key of a Unix socket door's listening socket (`FrontDoor.listening`): `unix|PATH`. */
function unixSocketKey(path: string): string {
  return `unix|${path}`;
}

/**
 * The listening socket at `path` that a replaced process passed (`gslbd ctl replace`), from the
 * sockets a replacement was started with; undefined when none was passed (or not a stream server).
 */
export function takenOverUnixSocket(inherited: ReadonlyMap<string, ListeningSocket>, path: string): Server | undefined {
  const old = inherited.get(unixSocketKey(path));
  return old && !('send' in old) ? old : undefined;
}

/**
 * `FrontDoor.listening()` of a Unix socket door: its listening socket under `unix|PATH`, for a
 * replacement process; empty before the door started and after it handed over.
 */
export function unixListening(path: string, server: Server | undefined): ReadonlyMap<string, ListeningSocket> {
  return new Map(server ? [[unixSocketKey(path), server]] : []);
}

/**
 * Stops accepting on this process's copy of a listening socket that a replacement process took
 * over (`gslbd ctl replace`), leaving the socket file, and the socket, to the replacement. Does not
 * wait for the server's `close` event: Node emits it only once connections passed to another
 * process are closed there.
 */
export function releaseUnixSocket(server: Server): void {
  handedOver.add(server);
  server.close();
}

/**
 * Closes a server of {@link listenUnixSocket} and removes its socket file, unless the socket was
 * passed by the service manager: then the file stays, and so does the listening socket itself
 * (held by systemd), where connections wait for the next engine instead of being refused.
 */
export async function closeUnixSocket(server: Server, path: string): Promise<void> {
  await new Promise<void>((r) => server.close(() => r()));
  if (inherited.has(server) || handedOver.has(server)) return;
  try {
    unlinkSync(path);
  } catch {
    // Already gone (Node removes the file of a socket it bound).
  }
}

/**
 * The listening Unix socket bound to `path` among the file descriptors the service manager passed
 * (systemd socket activation, sd_listen_fds(3): `LISTEN_PID` is this process, `LISTEN_FDS`
 * descriptors from 3 on), found by the path it is bound to (the inode of `/proc/self/fd/N` in
 * `/proc/net/unix`, whose flag 0x10000 marks a listening socket), so the unit's `ListenStream=`
 * paths need no other naming. Undefined without activation, or when no passed socket is bound to
 * `path` (gslbd then binds the path itself).
 */
export function inheritedUnixSocket(path: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const sockets = activatedSockets(env);
  if (sockets.length === 0) return undefined;
  const listening = new Map<string, string>(); // inode → bound path
  for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path
    const f = line.trim().split(/\s+/);
    if (f.length >= 8 && (Number.parseInt(f[3]!, 16) & 0x10000) !== 0) listening.set(f[6]!, f.slice(7).join(' '));
  }
  return sockets.find((s) => listening.get(s.inode) === path)?.fd;
}

async function removeStaleSocket(what: string, path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return;
  }
  if (!isSocket) throw new Error(`${what} socket path "${path}" exists and is not a socket; refusing to replace it`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`${what} socket "${path}" is in use by another process (is another gslbd running?)`);
  unlinkSync(path);
}
