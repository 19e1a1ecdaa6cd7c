import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/**
 * A loopback port free on both TCP and UDP right now (the kernel picks it), for configurations
 * that must name a port. Another process could take it before the caller binds; on loopback in
 * a test run that is rare, and the caller's bind error says so.
 */
export async function freePort(address = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, address, () => {
        const a = s.address();
        s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = createSocket('udp4');
      u.once('error', () => resolve(false));
      u.bind(port, address, () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}
