import { connect } from 'node:net';
import { armTimeout, elapsedMs, type CheckOutcome, type CheckRun, type CheckTarget } from './check.js';

/**
 * TCP connect check: succeeds when the three-way handshake completes within `timeoutMs`, then
 * closes the connection at once. Fails with the socket error code (ECONNREFUSED, …) or `timeout`.
 */
export function tcpCheck(timeoutMs: number): CheckRun {
  return (target: CheckTarget) => {
    const started = process.hrtime.bigint();
    return new Promise<CheckOutcome>((resolve) => {
      const socket = connect({ host: target.address, port: target.port, noDelay: true });
      let settled = false;
      const finish = (ok: boolean, error: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve({ ok, latencyMs: elapsedMs(started), error });
      };
      const timer = armTimeout(timeoutMs, () => finish(false, 'timeout'));
      socket.once('connect', () => finish(true, ''));
      // `on`, not `once`: a socket may report a second error while being torn down.
      socket.on('error', (e: NodeJS.ErrnoException) => finish(false, e.code ?? e.message));
    });
  };
}
