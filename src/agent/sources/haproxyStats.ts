import { createConnection } from 'node:net';
import { parse } from 'csv-parse/sync';

/**
 * HAProxy's runtime API over its stats socket (HAProxy management guide, "Unix Socket commands"):
 * one command per connection, the reply ends when HAProxy closes it.
 * @throws Error when the socket is missing or refuses, or no reply came within `timeoutMs`.
 */
export function haproxyCommand(socket: string, command: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const conn = createConnection(socket);
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`${socket}: no reply to "${command}" within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.on('connect', () => conn.end(`${command}\n`));
    conn.on('data', (c: Buffer) => chunks.push(c));
    conn.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${socket}: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    });
    conn.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** One row of `show stat`, by its column names (`pxname`, `svname`, `status`, `weight`, `scur`, …). */
export type StatRow = Readonly<Record<string, string>>;

/**
 * Parses `show stat`: CSV whose first line is the header prefixed by `# ` (columns grow between
 * HAProxy versions, so rows are read by name).
 * @throws Error when the reply is not a stat table (an error message from HAProxy).
 */
export function parseShowStat(text: string): StatRow[] {
  if (!text.startsWith('# ')) throw new Error(`not a "show stat" reply: ${text.slice(0, 80).trim()}`);
  return parse(text.slice(2), { columns: true, skip_empty_lines: true, relax_column_count: true }) as StatRow[];
}

/** Parses `show info` (`Name: value` lines) into a map. */
export function parseShowInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) out.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return out;
}

/**
 * Whether a server row counts as a healthy backend (seed 004's `healthyBackends`): its status is
 * UP (including "UP 1/3", still up while its checks fail towards the fall count) or "no check"
 * (a server without checks is used as up), and its effective weight is above 0. DOWN, NOLB (soft
 * stopped), DRAIN and MAINT (set by an operator, or via a tracked server) do not count.
 */
export function serverHealthy(row: StatRow): boolean {
  const status = row.status ?? '';
  return (status === 'UP' || status.startsWith('UP ') || status === 'no check') && Number(row.weight) > 0;
}
