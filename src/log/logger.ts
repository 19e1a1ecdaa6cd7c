import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The one logger of the process: pino, JSON lines on stdout (or `destination`, a file
 * descriptor), with `component` naming the part that logs.
 */
export function createLogger(level: string, destination: number = 1): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination({ dest: destination, sync: false }));
}
