import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

/**
 * A loopback port free for both TCP and UDP at the time of the call (servers under test bind
 * both). Another process may take it before the server binds; the caller then fails clearly.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once('error', reject);
      srv.listen(0, '127.0.0.1', () => {
        const a = srv.address();
        srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const s = createSocket('udp4');
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no free loopback port for TCP and UDP');
}
