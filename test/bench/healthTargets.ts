import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';

/**
 * The HTTP server behind the health benchmark (`health.bench.ts`): listens on `port` at `count`
 * distinct loopback addresses (see {@link targetAddress}), one listening socket per address, and
 * answers every request with one fixed `HTTP/1.1 200 OK` response and closes the connection. It
 * reads only until the end of the request head (a minimal HTTP/1.1 responder on `net`, like the
 * fixed-packet DNS responder), so the server side costs as little CPU as possible on the shared
 * machine. Prints `ready <count>` when every address is bound.
 * With a control port (the shared-scale benchmark, `sharedScale.bench.ts`): an HTTP server on
 * 127.0.0.1:<control port> where `POST /down?i=3,17` closes those targets' listening sockets (a
 * real failure: connections refused) and `POST /up` binds every closed one again; each answers
 * once the sockets are closed or bound.
 * Usage: node healthTargets.js <port> <count> [control port]
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
  const target = (): Server =>
    createServer((socket) => {
      let head = '';
      socket.on('error', () => {});
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        served++;
        socket.end(response);
      });
    });
  const bind = (s: Server, i: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen({ port, host: targetAddress(i), backlog: 64 }, () => resolve());
    });
  for (let i = 0; i < count; i++) {
    const s = target();
    await bind(s, i);
    servers.push(s);
  }
  const control = Number(process.argv[4]);
  if (Number.isInteger(control) && control > 0) {
    const closed = new Set<number>();
    createHttpServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://control');
      const done = (): void => void res.end(`${closed.size} closed\n`);
      if (url.pathname === '/down') {
        const picked = (url.searchParams.get('i') ?? '')
          .split(',')
          .map(Number)
          .filter((i) => Number.isInteger(i) && i >= 0 && i < count && !closed.has(i));
        for (const i of picked) closed.add(i);
        void Promise.all(picked.map((i) => new Promise<void>((resolve) => servers[i]!.close(() => resolve())))).then(done);
      } else if (url.pathname === '/up') {
        const again = [...closed];
        closed.clear();
        void Promise.all(again.map((i) => bind((servers[i] = target()), i))).then(done);
      } else res.writeHead(404).end();
    }).listen(control, '127.0.0.1');
  }
  process.stdout.write(`ready ${count}\n`);
  setInterval(() => process.stdout.write(`served ${served}\n`), 5000).unref();
}

if (process.argv[1]?.endsWith('healthTargets.js')) void main();
