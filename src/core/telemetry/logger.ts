import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The one logger of the process: pino, JSON lines on stdout (or `destination`, a file
 * descriptor), with `component` naming the part that logs.
 *
 * Writes are synchronous: lines are few (start-up, reloads, health transitions, sampled queries),
 * and a line logged before a long synchronous step (loading location data) must be out before
 * the step starts, and none may be lost when the process is killed.
 */
export function createLogger(level: string, destination: number = 1): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination({ dest: destination, sync: true }));
}
