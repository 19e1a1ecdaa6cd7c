import { readlinkSync } from 'node:fs';

/** One descriptor the service manager passed, with the inode of its socket. */
export interface ActivatedSocket {
  readonly fd: number;
  /** The socket's inode (`/proc/self/fd/N` reads `socket:[INODE]`), the key of `/proc/net/{unix,tcp,tcp6}` rows. */
  readonly inode: string;
}

/**
 * The sockets the service manager passed to this process (systemd socket activation,
 * sd_listen_fds(3): `LISTEN_PID` is this process, `LISTEN_FDS` descriptors from 3 on), each with
 * its inode, so a door can find its own among them by what `/proc/net` says the inode is bound to
 * (`./unixSocket.ts` by path, `./powerdns/activatedTcpSocket.ts` by port). Empty without
 * activation; descriptors that are not sockets, or already closed, are left out.
 */
export function activatedSockets(env: NodeJS.ProcessEnv = process.env): ActivatedSocket[] {
  const count = Number(env.LISTEN_FDS);
  if (env.LISTEN_PID !== String(process.pid) || !Number.isInteger(count) || count < 1) return [];
  const sockets: ActivatedSocket[] = [];
  for (let fd = 3; fd < 3 + count; fd++) {
    let target: string;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined) sockets.push({ fd, inode });
  }
  return sockets;
}
