import { outcomeOnce, type CheckRun } from './check.js';
import { checkDeadlines } from './checkDeadlines.js';
import { checkSockets, type CheckConnection, type ConnectionEvents } from './checkSockets.js';

/**
 * TCP connect check: succeeds when the three-way handshake completes within `timeoutMs`, then
 * ends the connection at once with an RST (`resetCheckConnection`: no TIME_WAIT, as HAProxy ends
 * its checks). Fails with the socket error code (ECONNREFUSED, …) or `timeout`.
 * Connects through {@link checkSockets} (a new TCP connection per check on a reused socket object).
 */
export function tcpCheck(timeoutMs: number): CheckRun {
  return (target) => (done) => {
    const started = performance.now();
    const finish = outcomeOnce(started, done, () => {
      checkDeadlines.disarm(timeoutMs, deadline);
      connection.close();
    });
    const events: ConnectionEvents = {
      connected: () => finish(true, ''),
      data: () => {},
      ended: () => {},
      failed: (code) => finish(false, code),
    };
    const deadline = checkDeadlines.arm(timeoutMs, started, { timedOut: () => finish(false, 'timeout') });
    const connection: CheckConnection = checkSockets.connect(target.address, target.port, events);
  };
}
