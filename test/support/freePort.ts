import { createSocket } from 'node:dgram';
import { createServer, isIPv6 } from 'node:net';

/**
 * A port that is free on `host` for both TCP and UDP right now (DNS servers bind both). The
 * system picks a free TCP port, the UDP side is checked, and both are released before returning,
 * so another process could take it in between: use it at once, and prefer port 0 where the
 * program under test supports it and reports the bound port (gslbd's listeners do; see
 * `startEngine`). Peers such as pdns_server or CoreDNS need a number up front.
 * @throws Error after 50 attempts without a port free on both protocols.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await freeTcpPort(host);
    if (await udpPortFree(host, port)) return port;
  }
  throw new Error(`no port free for both TCP and UDP on ${host}`);
}

function freeTcpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, ipv6Only: isIPv6(host) }, () => {
      const a = server.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function udpPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, host, () => socket.close(() => resolve(true)));
  });
}
