import { z } from 'zod';
import { outcomeOnce, type CheckRun } from './check.js';
import { checkDeadlines } from './checkDeadlines.js';
import { checkKind, monitorCommon } from './checkKind.js';
import { checkSockets, type CheckConnection, type ConnectionEvents } from './checkSockets.js';

/** TCP connect: up when the three-way handshake completes within the timeout. */
export const tcpMonitorSchema = z.strictObject({
  type: z.literal('tcp').describe('TCP connect monitor: up when the handshake completes within timeoutMs.'),
  ...monitorCommon,
});

/** The `tcp` check kind: no default port (the monitor or the check target sets one). */
export const tcpCheckKind = checkKind({
  schema: tcpMonitorSchema,
  defaultPort: undefined,
  check: (m) => tcpCheck(m.timeoutMs),
});

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
