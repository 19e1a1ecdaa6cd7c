import type { Socket } from 'node:net';
import { armTimeout, outcomeOnce, type CheckOutcome, type CheckRun, type CheckTarget } from './check.js';
import { checkSockets, type ConnectionEvents } from './checkSockets.js';

/**
 * TCP connect check: succeeds when the three-way handshake completes within `timeoutMs`, then
 * closes the connection at once. Fails with the socket error code (ECONNREFUSED, …) or `timeout`.
 * Connects through {@link checkSockets} (a new TCP connection per check on a reused socket object).
 */
export function tcpCheck(timeoutMs: number): CheckRun {
  return (target: CheckTarget) => {
    const started = process.hrtime.bigint();
    return new Promise<CheckOutcome>((resolve) => {
      const finish = outcomeOnce(started, resolve, () => {
        clearTimeout(timer);
        socket.destroy();
      });
      const events: ConnectionEvents = {
        connected: () => finish(true, ''),
        data: () => {},
        ended: () => {},
        failed: (code) => finish(false, code),
      };
      const timer = armTimeout(timeoutMs, () => finish(false, 'timeout'));
      const socket: Socket = checkSockets.connect(target.address, target.port, events).socket;
    });
  };
}
