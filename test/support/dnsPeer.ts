import { once } from 'node:events';
import type { TestNetwork } from './routedPath.js';

/** A running {@link startDnsPeer} peer. */
export interface DnsPeer {
  /** Stops it; resolves with the UDP queries and TCP connections it saw. */
  stop(): Promise<{ udp: number; tcp: number }>;
}

/**
 * Starts `dnsPeerProcess.ts` (compiled, in `dist/`) in `network`'s target namespace: port 53 over
 * UDP (each query answered at once) and TCP (each connection accepted), IPv4 and IPv6.
 * @throws Error when it exits before it is ready.
 */
export async function startDnsPeer(network: TestNetwork): Promise<DnsPeer> {
  const child = network.run(network.targetNs, 'dist/test/support/dnsPeerProcess.js', []);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => out.includes('ready\n') && resolve());
    child.once('exit', (code) => reject(new Error(`the DNS peer exited ${code} before it was ready: ${err}`)));
  });
  return {
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      const m = /udp (\d+) tcp (\d+)/.exec(out);
      return { udp: Number(m?.[1] ?? NaN), tcp: Number(m?.[2] ?? NaN) };
    },
  };
}
