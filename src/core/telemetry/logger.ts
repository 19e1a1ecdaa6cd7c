import { fstatSync } from 'node:fs';
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
 * Bytes of log lines held for a pipe or socket whose reader is slow; lines beyond are dropped
 * (counted, then reported by one line once the reader catches up). 16 MiB: about 50,000 lines.
 */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * The one logger of the process: pino, JSON lines on stdout (or `destination`, a file
 * descriptor), with `component` naming the part that logs. `level` may be changed later
 * (`logger.level = …`, as a reload does); `format` is fixed for the process.
 *
 * To a regular file or a terminal, writes are synchronous: a line logged before a long
 * synchronous step (loading location data) is out before the step starts, and none is lost when
 * the process is killed. To a **pipe or socket** (journald's stream, a container runtime, `| tee`)
 * they are asynchronous, through a buffer of {@link LOG_BUFFER_BYTES}: a synchronous write to a
 * pipe whose reader stalls blocks the event loop — pino's writer sleeps 100 ms per `EAGAIN` and
 * retries until the reader reads — so a stalled reader stopped every front door (issue 17: nothing
 * a peer does stops the query path; a reload's 389 KB line held the loop 115 ms). Each line is
 * still handed to the kernel at once (a libuv write, not a timer), and what is buffered is
 * written synchronously when the process exits. Lines beyond the buffer are dropped and counted;
 * once the reader catches up, one `warn` line says how many.
 */
export function createLogger(level: string, destination: number = 1, format: LogFormat = {}): Logger {
  const stream = pino.destination({ dest: destination, sync: !isPipeOrSocket(destination), maxLength: LOG_BUFFER_BYTES });
  const log = pino(
    {
      level,
      base: { pid: process.pid },
      ...(format.time === 'iso' ? { timestamp: pino.stdTimeFunctions.isoTime } : {}),
      ...(format.levels === 'names' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
    },
    stream,
  );
  let dropped = 0;
  stream.on('drop', () => {
    // The count is reported from the write that empties the buffer: a line now would be dropped too.
    if (dropped++ === 0) stream.once('drain', () => reportDropped());
  });
  const reportDropped = (): void => {
    const n = dropped;
    dropped = 0;
    log.warn({ dropped: n, bufferBytes: LOG_BUFFER_BYTES }, 'log lines dropped: the log reader was too slow');
  };
  return log;
}

/** True when `fd` is a pipe or a socket (a reader that may stall); false for files, terminals and bad descriptors. */
function isPipeOrSocket(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    return st.isFIFO() || st.isSocket();
  } catch {
    return false;
  }
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
