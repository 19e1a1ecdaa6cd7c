import { readFileSync } from 'node:fs';
import { activatedSockets } from '../activatedSockets.js';

/**
 * The listening TCP socket on `port` among the file descriptors the service manager passed
 * (systemd socket activation, sd_listen_fds(3): `LISTEN_PID` is this process, `LISTEN_FDS`
 * descriptors from 3 on), found by its inode (`/proc/self/fd/N`) among the listening sockets of
 * `/proc/net/tcp` and `/proc/net/tcp6` (state `0A`), so a unit's `ListenStream=127.0.0.1:PORT`
 * needs no other naming. Undefined without activation or when no passed socket listens on `port`
 * (the listener then binds itself). The same rule as `../unixSocket.ts` for Unix sockets.
 */
export function activatedTcpSocket(port: number, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const sockets = activatedSockets(env);
  if (sockets.length === 0 || port === 0) return undefined;
  const listening = new Set<string>(); // inodes of sockets listening on `port`
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 in this kernel
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue;
      const localPort = Number.parseInt(f[1]!.split(':').pop()!, 16);
      if (localPort === port) listening.add(f[9]!);
    }
  }
  return sockets.find((s) => listening.has(s.inode))?.fd;
}
