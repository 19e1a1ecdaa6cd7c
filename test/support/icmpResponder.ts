import { once } from 'node:events';
import type { RoutedPath } from './routedPath.js';

/** A running userspace echo responder in a path's target namespace. */
export interface IcmpResponder {
  /** Stops it; resolves with the echo requests it received. */
  stop(): Promise<number>;
}

/**
 * Starts `icmpResponderProcess.ts` (compiled, in `dist/`) in `path`'s target namespace: echo replies
 * of `family` (4: ICMP, 6: ICMPv6) after `delayMs`, a share `loss` of requests dropped by a generator seeded with `seed`.
 * @throws Error when it exits before it is ready (no CAP_NET_RAW, addon missing).
 */
export async function startIcmpResponder(path: RoutedPath, delayMs: number, loss = 0, seed = 1, family: 4 | 6 = 4): Promise<IcmpResponder> {
  const child = path.run(path.targetNs, 'dist/test/support/icmpResponderProcess.js', [String(delayMs), String(loss), String(seed), String(family)]);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (out.includes('ready\n')) resolve();
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => reject(new Error(`the ICMP responder exited ${code} before it was ready: ${err}`)));
  });
  return {
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      return Number(/received (\d+)/.exec(out)?.[1] ?? NaN);
    },
  };
}
