import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay on loopback that a test can shut and open, as a partition between one client and
 * its server: shut, it resets every relayed connection and every new one; open, it relays bytes
 * both ways. The shared-state tests put one between a single engine node and Redis, so that node
 * reconnects at a moment the test chooses.
 */
export interface TcpGate {
  readonly port: number;
  /** Resets every relayed connection; new ones are reset until {@link open}. */
  shut(): void;
  open(): void;
  close(): Promise<void>;
}

/** Starts a gate (open) on a free 127.0.0.1 port, relaying to `upstream`. */
export async function startTcpGate(upstream: { host: string; port: number }): Promise<TcpGate> {
  let isOpen = true;
  const relayed = new Set<Socket>();
  const server = createServer((client) => {
    if (!isOpen) {
      client.resetAndDestroy();
      return;
    }
    const server = connect(upstream.port, upstream.host);
    for (const [from, to] of [
      [client, server],
      [server, client],
    ] as const) {
      relayed.add(from);
      from.on('error', () => to.destroy());
      from.on('close', () => {
        relayed.delete(from);
        to.destroy();
      });
      from.pipe(to);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    shut: () => {
      isOpen = false;
      for (const s of relayed) s.resetAndDestroy();
    },
    open: () => {
      isOpen = true;
    },
    close: () =>
      new Promise((resolve) => {
        for (const s of relayed) s.destroy();
        server.close(() => resolve());
      }),
  };
}
