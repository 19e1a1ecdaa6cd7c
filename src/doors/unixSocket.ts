import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** Longest Unix socket path Linux accepts (`sun_path` is 108 bytes with the terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Listens on a Unix socket for a front door (the PowerDNS and compact sockets) and sets its file
 * mode. A socket file left behind by a process that is gone (SIGKILL, crash) is replaced, but
 * only after a connection attempt to it is refused, so a running engine's socket is never taken
 * over.
 * @param what the front door's name, for error messages ("PowerDNS", "compact").
 * @param mode octal file mode text, e.g. "0660".
 * @throws Error when the path is longer than {@link MAX_SOCKET_PATH_BYTES}, exists and is not a
 *   socket, is in use by a live listener, or cannot be bound.
 */
export async function listenUnixSocket(what: string, path: string, mode: string, onConnection: (conn: Socket) => void): Promise<Server> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(`${what} socket path "${path}" is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
  }
  await removeStaleSocket(what, path);
  const server = createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, Number.parseInt(mode, 8));
  return server;
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
