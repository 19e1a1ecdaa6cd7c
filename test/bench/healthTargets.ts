import { createServer, type Server } from 'node:net';

/**
 * The HTTP server behind the health benchmark (`health.bench.ts`): listens on `port` at `count`
 * distinct loopback addresses (see {@link targetAddress}), one listening socket per address, and
 * answers every request with one fixed `HTTP/1.1 200 OK` response and closes the connection. It
 * reads only until the end of the request head (a minimal HTTP/1.1 responder on `net`, like the
 * fixed-packet DNS responder), so the server side costs as little CPU as possible on the shared
 * machine. Prints `ready <count>` when every address is bound.
 * Usage: node healthTargets.js <port> <count>
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
  const response = Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK');
  const servers: Server[] = [];
  for (let i = 0; i < count; i++) {
    const s = createServer((socket) => {
      let head = '';
      socket.on('error', () => {});
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        served++;
        socket.end(response);
      });
    });
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
