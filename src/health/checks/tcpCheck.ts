import { armTimeout, outcomeOnce, type CheckOutcome, type CheckRun, type CheckTarget } from './check.js';
import { checkSockets, type CheckConnection, type ConnectionEvents } from './checkSockets.js';

/**
 * TCP connect check: succeeds when the three-way handshake completes within `timeoutMs`, then
 * ends the connection at once with an RST (`resetCheckConnection`: no TIME_WAIT, as HAProxy ends
 * its checks). Fails with the socket error code (ECONNREFUSED, …) or `timeout`.
 * Connects through {@link checkSockets} (a new TCP connection per check on a reused socket object).
 */
export function tcpCheck(timeoutMs: number): CheckRun {
  return (target: CheckTarget) => {
    const started = process.hrtime.bigint();
    return new Promise<CheckOutcome>((resolve) => {
      const finish = outcomeOnce(started, resolve, () => {
        clearTimeout(timer);
        connection.close();
      });
      const events: ConnectionEvents = {
        connected: () => finish(true, ''),
        data: () => {},
        ended: () => {},
        failed: (code) => finish(false, code),
      };
      const timer = armTimeout(timeoutMs, () => finish(false, 'timeout'));
      const connection: CheckConnection = checkSockets.connect(target.address, target.port, events);
    });
  };
}
