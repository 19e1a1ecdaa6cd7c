import { pino, type Logger } from 'pino';

export type { Logger };

/** How log lines spell time and level (`logging.time`, `logging.levels`). */
export interface LogFormat {
  /** `epoch`: pino's milliseconds since the epoch (default); `iso`: ISO 8601 UTC text, as log pipelines without a parser stage expect. */
  readonly time?: 'epoch' | 'iso';
  /** `numbers`: pino's 10–60 (default); `names`: `trace` … `fatal`. */
  readonly levels?: 'numbers' | 'names';
}

/**
 * The one logger of the process: pino, JSON lines on stdout (or `destination`, a file
 * descriptor), with `component` naming the part that logs. `level` may be changed later
 * (`logger.level = …`, as a reload does); `format` is fixed for the process.
 *
 * Writes are synchronous: lines are few (start-up, reloads, health transitions, sampled queries),
 * and a line logged before a long synchronous step (loading location data) must be out before
 * the step starts, and none may be lost when the process is killed.
 */
export function createLogger(level: string, destination: number = 1, format: LogFormat = {}): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      ...(format.time === 'iso' ? { timestamp: pino.stdTimeFunctions.isoTime } : {}),
      ...(format.levels === 'names' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
    },
    pino.destination({ dest: destination, sync: true }),
  );
}

/**
 * Writes one `fatal` JSON line for an error that ends the process before (or without) a logger
 * (start-up failures), so a log pipeline reading stdout sees why the engine is gone.
 */
export function logFatal(err: Error, fields: Record<string, unknown> = {}, destination: number = 1): void {
  const log = createLogger('fatal', destination);
  log.fatal({ ...fields, err }, err.message.split('\n')[0]!);
  log.flush();
}
