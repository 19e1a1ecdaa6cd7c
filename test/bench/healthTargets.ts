import { createServer, type Server } from 'node:http';

/**
 * The HTTP server behind the health benchmark (`health.bench.ts`): listens on `port` at `count`
 * distinct loopback addresses (see {@link targetAddress}), one listening socket per address, and
 * answers every request `200 OK` with `Connection: close`. Prints `ready <count>` when every
 * address is bound. Usage: node healthTargets.js <port> <count>
 */

/** The i-th target address: 127.1.0.1 … in 127.1.0.0/16, 250 per third octet (never .0 or .255). */
export function targetAddress(i: number): string {
  return `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

async function main(): Promise<void> {
  const port = Number(process.argv[2]);
  const count = Number(process.argv[3]);
  if (!Number.isInteger(port) || !Number.isInteger(count) || count < 1 || count > 60_000) {
    process.stderr.write('usage: healthTargets.js <port> <count>\n');
    process.exit(2);
  }
  let served = 0;
  const handler = (_req: unknown, res: import('node:http').ServerResponse): void => {
    served++;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2, connection: 'close' });
    res.end('OK');
  };
  const servers: Server[] = [];
  for (let i = 0; i < count; i++) {
    const s = createServer({ keepAlive: false }, handler);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen({ port, host: targetAddress(i), backlog: 64 }, () => resolve());
    });
    servers.push(s);
  }
  process.stdout.write(`ready ${count}\n`);
  setInterval(() => process.stdout.write(`served ${served}\n`), 5000).unref();
}

if (process.argv[1]?.endsWith('healthTargets.js')) void main();
